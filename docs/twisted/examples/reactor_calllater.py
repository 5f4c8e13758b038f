"""callLater, DelayedCall.active/getTime/cancel, on a fake clock."""
from twisted.internet import task

clock = task.Clock()  # a reactor that only moves when told to


def turn(name):
    print(f"t={clock.seconds():g} turn {name}")


first = clock.callLater(0, turn, "A")          # "as soon as the reactor is free"
later = clock.callLater(2.5, turn, "B")
dropped = clock.callLater(1, turn, "never")
print("pending:", first.active(), later.getTime(), dropped.active())
dropped.cancel()                               # a cancelled call never runs
print("after cancel:", dropped.active())
clock.advance(0)                               # the reactor's next iteration
clock.advance(3)
print("after it ran:", later.active())
try:
    later.cancel()
except Exception as e:                          # a call that ran cannot be cancelled
    print("cancel after run:", type(e).__name__)
