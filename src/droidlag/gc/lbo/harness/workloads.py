"""The harness's workloads: Java sources shipped in this package (`java/`), compiled with the installed javac into a
cache folder at run time, and real libraries fetched from Maven Central through Maven at run time (never
committed). DaCapo and Renaissance are not published on Maven Central (checked with `mvn dependency:get`, see
docs/gc-lbo.md), so the real workload is Apache Lucene indexing and searching, as DaCapo's luindex/lusearch do."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from importlib import resources
from pathlib import Path


class HarnessError(RuntimeError):
    """The harness cannot run: no JDK, javac failed, Maven could not fetch an artifact."""


@dataclass(frozen=True)
class Workload:
    """A workload: `main_class` implements LboDriver.Workload; `args` are its parameters (sizes, seed); `maven`
    the group:artifact:version coordinates it needs on the class path; `epsilon_heap_mb` the heap the no-GC baseline
    needs to hold all that an invocation allocates."""

    name: str
    main_class: str
    sources: tuple[str, ...]
    args: tuple[str, ...]
    maven: tuple[str, ...] = ()
    warmups: int = 2
    epsilon_heap_mb: int = 2048
    description: str = ""


WORKLOADS: dict[str, Workload] = {
    "gcbench": Workload("gcbench", "GcBench", ("LboDriver.java", "GcBench.java"), ("16", "16", "4", "500000"),
                        epsilon_heap_mb=1792,
                        description="GCBench-style allocation benchmark (Boehm & Ellis): long-lived tree and array, "
                                    "short-lived trees of depth 4-16 built top-down and bottom-up"),
    "lucene": Workload("lucene", "LuceneIndex", ("LboDriver.java", "LuceneIndex.java"), ("400", "80", "300", "15"),
                       maven=("org.apache.lucene:lucene-core:9.11.1",), epsilon_heap_mb=384,
                       description="Apache Lucene 9.11.1 from Maven Central: index 400 seeded Zipf-text documents "
                                   "in memory, answer 300 boolean queries"),
}


def default_cache() -> Path:
    """Where compiled workloads live: $XDG_CACHE_HOME/droidlag/lbo (else ~/.cache/droidlag/lbo)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "droidlag" / "lbo"


def maven_jar(coords: str, mvn: str = "mvn") -> Path:
    """Fetch group:artifact:version into the local Maven repository (if absent) and return the jar's path."""
    group, artifact, version = coords.split(":")
    repo = Path(os.environ.get("DROIDLAG_M2_REPO") or Path.home() / ".m2" / "repository")
    jar = repo / group.replace(".", "/") / artifact / version / f"{artifact}-{version}.jar"
    if jar.exists():
        return jar
    if shutil.which(mvn) is None:
        raise HarnessError(f"workload needs {coords} from Maven Central, and `{mvn}` is not installed")
    r = subprocess.run([mvn, "-B", "-q", "dependency:get", "-Dtransitive=false", f"-Dartifact={coords}"],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0 or not jar.exists():
        raise HarnessError(f"Maven could not fetch {coords}: {(r.stdout + r.stderr).strip()[-400:]}")
    return jar


def prepare(workload: Workload, cache: Path | None = None, javac: str = "javac") -> list[Path]:
    """Compile the workload (once per source/jar content) and return its class path."""
    jars = [maven_jar(c) for c in workload.maven]
    src_dir = resources.files("droidlag.gc.lbo.harness") / "java"
    texts = {s: (src_dir / s).read_text() for s in workload.sources}
    key = hashlib.sha256("\n".join([*texts.values(), *map(str, jars)]).encode()).hexdigest()[:16]
    out = (cache or default_cache()) / f"{workload.name}-{key}"
    if not (out / f"{workload.main_class}.class").exists():
        if shutil.which(javac) is None:
            raise HarnessError("javac not found: install a JDK (Debian: openjdk-17-jdk-headless)")
        tmp = out.with_name(out.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        (tmp / "src").mkdir(parents=True)
        for name, text in texts.items():
            (tmp / "src" / name).write_text(text)
        cp = os.pathsep.join(map(str, jars)) or "."
        r = subprocess.run([javac, "-nowarn", "-cp", cp, "-d", str(tmp), *[str(tmp / "src" / s) for s in texts]],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise HarnessError(f"javac failed for {workload.name}: {r.stderr.strip()[-600:]}")
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)
    return [out, *jars]
