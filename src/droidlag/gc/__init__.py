"""GC: what garbage collection costs an app. On device data (ART's GC log lines, GC in traces) and with the
lower-bound-overhead (LBO) method of Cai et al. (ISPASS 2022) on real JVM runs (`droidlag.gc.lbo`)."""
