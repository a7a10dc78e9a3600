// droidlag LBO driver: runs a workload for warm-up iterations, then one timed iteration between two marker lines on
// stdout, and prints the timed iteration's wall clock, task clock (CPU of all threads) and the CPU of the JVM's GC
// threads, read from /proc/self/task/*/schedstat (nanoseconds). The harness reads the GC pauses between the markers
// from the -Xlog:gc*,safepoint lines the JVM writes to the same stdout.
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;

public final class LboDriver {
    /** A workload: one iteration of real work; `args` are its own parameters. */
    public interface Workload {
        void setUp(String[] args) throws Exception;
        long iterate() throws Exception;  // returns a checksum, printed so the work cannot be optimised away
    }

    // JVM thread names (comm, at most 15 chars) that do garbage collection work in OpenJDK 17. The VM Thread runs
    // every stop-the-world operation, which for these workloads is GC work.
    static boolean isGcThread(String comm) {
        return comm.startsWith("GC Thread") || comm.startsWith("G1 ") || comm.startsWith("VM Thread")
            || comm.startsWith("ZWorker") || comm.startsWith("ZDriver") || comm.startsWith("ZDirector")
            || comm.startsWith("ZStat") || comm.startsWith("ZUncommit") || comm.startsWith("ZRuntime")
            || comm.startsWith("Shenandoah") || comm.startsWith("Shenandoah") || comm.startsWith("Epsilon");
    }

    /** tid -> {runtime ns, 1 if a GC thread else 0}. */
    static Map<String, long[]> snapshot() throws IOException {
        Map<String, long[]> out = new HashMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Paths.get("/proc/self/task"))) {
            for (Path t : tasks) {
                try {
                    String sched = new String(Files.readAllBytes(t.resolve("schedstat"))).trim();
                    String comm = new String(Files.readAllBytes(t.resolve("comm"))).trim();
                    long ns = Long.parseLong(sched.split(" ")[0]);
                    out.put(t.getFileName().toString(), new long[] {ns, isGcThread(comm) ? 1 : 0});
                } catch (IOException | RuntimeException e) {
                    // the thread exited while we read it
                }
            }
        }
        return out;
    }

    static long[] delta(Map<String, long[]> before, Map<String, long[]> after) {
        long all = 0, gc = 0;
        for (Map.Entry<String, long[]> e : after.entrySet()) {
            long[] b = before.get(e.getKey());
            long d = e.getValue()[0] - (b == null ? 0 : b[0]);
            all += d;
            if (e.getValue()[1] == 1) gc += d;
        }
        return new long[] {all, gc};
    }

    public static void main(String[] args) throws Exception {
        String cls = args[0];
        int warmups = Integer.parseInt(args[1]);
        String[] rest = new String[args.length - 2];
        System.arraycopy(args, 2, rest, 0, rest.length);
        Workload w = (Workload) Class.forName(cls).getDeclaredConstructor().newInstance();
        w.setUp(rest);
        long sum = 0;
        for (int i = 0; i < warmups; i++) {
            long t0 = System.nanoTime();
            sum += w.iterate();
            System.out.println("droidlag-lbo warmup " + (i + 1) + " ns " + (System.nanoTime() - t0));
        }
        System.out.println("droidlag-lbo timed start");
        System.out.flush();
        PerfControl perf = PerfControl.fromEnvironment();
        if (perf != null) perf.send("enable");
        Map<String, long[]> before = snapshot();
        long t0 = System.nanoTime();
        sum += w.iterate();
        long wall = System.nanoTime() - t0;
        Map<String, long[]> after = snapshot();
        if (perf != null) perf.send("disable");
        System.out.flush();
        System.out.println("droidlag-lbo timed end");
        long[] cpu = delta(before, after);
        System.out.println("droidlag-lbo result wall_ns " + wall + " task_clock_ns " + cpu[0] + " gc_cpu_ns " + cpu[1]
            + " checksum " + sum);
        System.out.flush();
    }

    /** perf stat's control fifos (--control=fifo:ctl,ack with -D -1): counters run only around the timed iteration. */
    static final class PerfControl {
        final java.io.OutputStream ctl;
        final java.io.InputStream ack;

        PerfControl(String ctlPath, String ackPath) throws IOException {
            ctl = Files.newOutputStream(Paths.get(ctlPath));
            ack = Files.newInputStream(Paths.get(ackPath));
        }

        static PerfControl fromEnvironment() throws IOException {
            String c = System.getenv("DROIDLAG_PERF_CTL"), a = System.getenv("DROIDLAG_PERF_ACK");
            return c == null || a == null ? null : new PerfControl(c, a);
        }

        void send(String command) throws IOException {
            ctl.write((command + "\n").getBytes());
            ctl.flush();
            int ch;
            while ((ch = ack.read()) != -1 && ch != '\n') { }  // perf answers "ack\n"
        }
    }
}
