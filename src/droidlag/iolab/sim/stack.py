"""One simulated phone: engine, FG detector, policy, device, block layer, page cache and its kworker."""
from __future__ import annotations

from itertools import count

from droidlag.iolab.sim.app import App, ForegroundDetector, Task
from droidlag.iolab.sim.blocklayer import BlockLayer
from droidlag.iolab.sim.device import PROFILES, Device, DeviceProfile
from droidlag.iolab.sim.engine import Engine, Lock
from droidlag.iolab.sim.pagecache import MemoryConfig, PageCache
from droidlag.iolab.sim.policies import Policy, get_policy


class Stack:
    def __init__(self, policy: str | Policy = "cfq", device: str | DeviceProfile = "ufs", seed: int = 0,
                 memory: MemoryConfig | None = None, record: bool = False):
        self.engine = Engine(seed)
        self.rng = self.engine.rng
        self.fg = ForegroundDetector()
        self.policy = get_policy(policy) if isinstance(policy, str) else policy
        if hasattr(self.policy, "stack"):
            self.policy.stack = self
        self.profile = PROFILES[device] if isinstance(device, str) else device
        self.device = Device(self.engine, self.profile, preempt_fg=self.policy.device_preempt)
        self.fg_lbas: set[int] = set()
        self.blk = BlockLayer(self.engine, self.device, self.policy.make_scheduler(), self.policy, stack=self)
        if record:
            self.blk.log = []
        self.lock = Lock(self.engine)
        if self.policy.fpm:
            self.lock.priority_of = lambda task: self.policy.lock_priority(task, self)
        self.lock.on_contended = self.policy.on_lock_contended
        self._pids = count(1000)
        self._uids = count(10001)
        self.system = App("system", 1000, self._pids)
        self.kworker = Task("kworker/u16:1", 99, 0)
        self.pc = PageCache(self, memory or MemoryConfig())
        self.engine.process(self.pc.flusher(self.kworker), "kworker")

    def new_app(self, name: str, uid: int | None = None) -> App:
        return App(name, uid if uid is not None else next(self._uids), self._pids)

    def spawn(self, gen, name: str = ""):
        return self.engine.process(gen, name)

    @property
    def now(self) -> int:
        return self.engine.now

    def run(self, until: int | None = None, stop=None) -> int:
        return self.engine.run(until=until, stop=stop)


__all__ = ["Stack", "Task", "App"]
