"""LoopingCall: a heartbeat on a fake clock; start(now=False), stop, and its Deferred."""
from twisted.internet import task

clock = task.Clock()


def beat():
    print(f"t={clock.seconds():g} heartbeat")


heartbeat = task.LoopingCall(beat)
heartbeat.clock = clock                 # the engine sets its reactor here
done = heartbeat.start(5, now=False)    # first beat after 5 s, not at once
done.addCallback(print)                 # fires with the LoopingCall once stopped
clock.advance(5)
clock.advance(5)
clock.advance(12)                        # late: skipped beats are not run twice
print("running:", heartbeat.running)
heartbeat.stop()
print("running:", heartbeat.running)
