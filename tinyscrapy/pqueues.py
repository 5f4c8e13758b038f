"""TODO docstring (scheduler)."""

from collections import deque


class _SlotQueue:
    """The requests of one slot: a FIFO per priority, and where the slot is filed."""

    __slots__ = ("key", "queues", "priorities", "count", "where", "entry")

    def __init__(self, key):
        self.key = key
        self.queues = {}
        self.priorities = []  # highest first, each with a non-empty queue
        self.count = 0
        self.where = None
        self.entry = None

    def push(self, request):
        queue = self.queues.get(request.priority)
        if queue is None:
            queue = self.queues[request.priority] = deque()
            self.priorities.append(request.priority)
            self.priorities.sort(reverse=True)
        queue.append(request)
        self.count += 1

    def pop(self):
        priority = self.priorities[0]
        queue = self.queues[priority]
        request = queue.popleft()
        if not queue:
            del self.queues[priority]
            del self.priorities[0]
        self.count -= 1
        return request
