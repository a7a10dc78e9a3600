// GCBench-style allocation benchmark (after Boehm and Ellis's GCBench): a long-lived binary tree and array stay live
// while many short-lived trees of growing depth are built top-down and bottom-up. Parameters: long-lived tree depth,
// max short-lived depth, repeats (how many times the short-lived phase runs per iteration), array length.
public final class GcBench implements LboDriver.Workload {
    static final class Node {
        Node left, right;
        int i, j;
        Node(Node l, Node r) { left = l; right = r; }
        Node() { }
    }

    int longLivedDepth = 16, maxDepth = 16, minDepth = 4, repeats = 4, arrayLength = 500_000;
    Node longLived;
    double[] array;

    public void setUp(String[] a) {
        if (a.length > 0) longLivedDepth = Integer.parseInt(a[0]);
        if (a.length > 1) maxDepth = Integer.parseInt(a[1]);
        if (a.length > 2) repeats = Integer.parseInt(a[2]);
        if (a.length > 3) arrayLength = Integer.parseInt(a[3]);
    }

    static int treeSize(int depth) { return (1 << (depth + 1)) - 1; }

    static void populate(int depth, Node n) {
        if (depth <= 0) return;
        n.left = new Node();
        n.right = new Node();
        populate(depth - 1, n.left);
        populate(depth - 1, n.right);
    }

    static Node makeTree(int depth) {
        return depth <= 0 ? new Node() : new Node(makeTree(depth - 1), makeTree(depth - 1));
    }

    static long count(Node n) { return n == null ? 0 : 1 + count(n.left) + count(n.right); }

    public long iterate() {
        long check = count(makeTree(maxDepth + 1));  // stretch the heap
        longLived = new Node();
        populate(longLivedDepth, longLived);
        array = new double[arrayLength];
        for (int k = 0; k < arrayLength / 2; k++) array[k] = 1.0 / (k + 1);
        for (int r = 0; r < repeats; r++) {
            for (int d = minDepth; d <= maxDepth; d += 2) {
                int iters = 2 * treeSize(maxDepth) / treeSize(d);
                for (int k = 0; k < iters; k++) {
                    Node t = new Node();
                    populate(d, t);
                    check += t.left == null ? 0 : 1;
                }
                for (int k = 0; k < iters; k++) check += makeTree(d).right == null ? 0 : 1;
            }
        }
        if (longLived == null || array[1000] != 1.0 / 1001) throw new AssertionError("live data lost");
        return check + count(longLived);
    }
}
