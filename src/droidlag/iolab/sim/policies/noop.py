"""noop: first come, first served."""
from droidlag.iolab.sim.policies.base import FifoScheduler, Policy


class Noop(Policy):
    name = "noop"
    description = "FIFO at the block layer"

    def make_scheduler(self):
        return FifoScheduler()
