// A real-library workload: Apache Lucene (fetched from Maven Central at run time) indexes a seeded synthetic corpus
// in memory and answers term and boolean queries, as DaCapo's luindex/lusearch do with real text. Parameters:
// documents, words per document, queries, seed.
import java.util.Random;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.ByteBuffersDirectory;

public final class LuceneIndex implements LboDriver.Workload {
    int docs = 3000, words = 150, queries = 400;
    long seed = 15;
    String[] vocabulary;
    double[] zipfCdf;

    public void setUp(String[] a) {
        if (a.length > 0) docs = Integer.parseInt(a[0]);
        if (a.length > 1) words = Integer.parseInt(a[1]);
        if (a.length > 2) queries = Integer.parseInt(a[2]);
        if (a.length > 3) seed = Long.parseLong(a[3]);
        String[] syl = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "zen", "dar", "mol", "qui", "ber", "tas"};
        Random r = new Random(seed);
        vocabulary = new String[20000];
        for (int i = 0; i < vocabulary.length; i++) {
            StringBuilder b = new StringBuilder();
            int n = 2 + r.nextInt(3);
            for (int k = 0; k < n; k++) b.append(syl[r.nextInt(syl.length)]);
            vocabulary[i] = b.append(i % 97).toString();
        }
        zipfCdf = new double[vocabulary.length];  // Zipf's law, as in natural text
        double sum = 0;
        for (int i = 0; i < zipfCdf.length; i++) zipfCdf[i] = (sum += 1.0 / (i + 1));
        for (int i = 0; i < zipfCdf.length; i++) zipfCdf[i] /= sum;
    }

    String word(Random r) {
        int i = java.util.Arrays.binarySearch(zipfCdf, r.nextDouble());
        return vocabulary[Math.min(i < 0 ? -i - 1 : i, vocabulary.length - 1)];
    }

    public long iterate() throws Exception {
        Random r = new Random(seed);
        ByteBuffersDirectory dir = new ByteBuffersDirectory();
        try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig(new StandardAnalyzer()))) {
            for (int d = 0; d < docs; d++) {
                StringBuilder body = new StringBuilder();
                for (int k = 0; k < words; k++) body.append(word(r)).append(' ');
                Document doc = new Document();
                doc.add(new StringField("id", Integer.toString(d), Field.Store.YES));
                doc.add(new TextField("body", body.toString(), Field.Store.NO));
                w.addDocument(doc);
            }
        }
        long hits = 0;
        try (DirectoryReader reader = DirectoryReader.open(dir)) {
            IndexSearcher s = new IndexSearcher(reader);
            for (int q = 0; q < queries; q++) {
                BooleanQuery.Builder b = new BooleanQuery.Builder();
                b.add(new TermQuery(new Term("body", word(r))), BooleanClause.Occur.SHOULD);
                b.add(new TermQuery(new Term("body", word(r))), BooleanClause.Occur.SHOULD);
                b.add(new TermQuery(new Term("body", word(r))), BooleanClause.Occur.MUST);
                TopDocs top = s.search(b.build(), 10);
                hits += top.totalHits.value;
            }
        }
        return hits;
    }
}
