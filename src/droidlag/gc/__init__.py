"""GC: what garbage collection costs an app. On device data (ART's GC log lines, the GC totals of ART's process
dumps, GC in traces: `device`, `trace`, `evidence` for frames and hangs) and with the lower-bound-overhead (LBO)
method of Cai et al. (ISPASS 2022) on real JVM runs (`droidlag.gc.lbo`)."""
