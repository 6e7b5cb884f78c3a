// The log index and search against the tools everyone trusts: line counts against `wc -l`,
// matching lines against `grep -n` (LC_ALL=C, -a), on generated files with CRLF endings, no
// trailing newline, a 10 MB line, invalid UTF-8, and a file that grows and is truncated while
// indexed; a search that is cancelled stops and says so.

#include "core/logs/lineindex.h"
#include "core/logs/logsearch.h"

#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge::Logs;

namespace {

qint64 wcLines(const QString &path)
{
    QProcess wc;
    wc.start(QStringLiteral("wc"), {QStringLiteral("-l"), path});
    if (!wc.waitForFinished(60000)) qWarning() << "wc did not finish:" << wc.errorString();
    const QByteArray out = wc.readAllStandardOutput();
    if (wc.exitCode() != 0 || out.isEmpty()) qWarning() << "wc failed:" << wc.errorString() << wc.readAllStandardError();
    return out.trimmed().split(' ').value(0).toLongLong();
}

// grep -n's line numbers (1-based), as 0-based indexes.
QList<qint64> grepLines(const QString &path, const QStringList &flags, const QString &pattern)
{
    QProcess grep;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("LC_ALL"), QStringLiteral("C"));
    grep.setProcessEnvironment(env);
    grep.start(QStringLiteral("grep"), QStringList{QStringLiteral("-a"), QStringLiteral("-n")} + flags + QStringList{QStringLiteral("-e"), pattern, path});
    grep.waitForFinished(60000);
    QList<qint64> lines;
    for (const QByteArray &line : grep.readAllStandardOutput().split('\n')) {
        if (line.isEmpty()) continue;
        lines << line.left(line.indexOf(':')).toLongLong() - 1;
    }
    return lines;
}

QList<qint64> search(const LineIndex &index, const QString &pattern, bool regex = false, bool caseInsensitive = false)
{
    SearchOptions options;
    options.pattern = pattern;
    options.regex = regex;
    options.caseInsensitive = caseInsensitive;
    const auto outcome = searchLines(index, options);
    if (!outcome) qWarning() << outcome.error().message;
    return outcome ? outcome->lines : QList<qint64>{QList<qint64>{-2}};
}

bool complete(const Starforge::Result<bool> &updated)
{
    if (!updated) qWarning() << updated.error().message;
    return updated && *updated;
}

bool cancelled(const Starforge::Result<bool> &updated)
{
    return updated && !*updated;
}

void write(const QString &path, const QByteArray &bytes, QIODevice::OpenMode mode = QIODevice::WriteOnly)
{
    QFile f(path);
    QVERIFY(f.open(mode));
    QCOMPARE(f.write(bytes), bytes.size());
}

} // namespace

class TestLogIndex : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;

    // A log with what real ones have: timestamps, levels, tracebacks, progress lines.
    QByteArray generated(int lines, const QByteArray &ending)
    {
        QByteArray out;
        const char *levels[] = {"INFO", "WARNING", "ERROR", "DEBUG"};
        for (int i = 0; i < lines; ++i) {
            const quint32 r = QRandomGenerator::global()->bounded(1000u);
            out += QByteArray::number(i) + ' ' + levels[r % 4] + " step " + QByteArray::number(r) + (r % 7 == 0 ? " Traceback (most recent call last)" : "")
                   + (r % 11 == 0 ? " loss=nan" : "") + ending;
        }
        return out;
    }

private Q_SLOTS:
    void countsAndReadsLikeWc_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("one newline") << QByteArray("\n");
        QTest::newRow("no trailing newline") << QByteArray("a\nb\nlast without newline");
        QTest::newRow("crlf") << generated(500, "\r\n");
        QTest::newRow("lf") << generated(5000, "\n");
        QTest::newRow("empty lines") << QByteArray("\n\n\nx\n\n");
        QTest::newRow("invalid utf-8") << QByteArray("ok\n\xff\xfe broken \xc3\x28 bytes\nend\n");
        QTest::newRow("10 MB line") << (QByteArray("before\n") + QByteArray(10 * 1024 * 1024, 'x') + QByteArray(" ERROR at the end\nafter\n"));
    }

    void countsAndReadsLikeWc()
    {
        QFETCH(QByteArray, content);
        const QString path = m_dir.filePath(QStringLiteral("%1.log").arg(QString::fromLatin1(QTest::currentDataTag()).replace(u' ', u'-')));
        write(path, content);
        LineIndex index(path);
        QVERIFY(complete(index.update()));
        const qint64 wc = wcLines(path);
        const qint64 expected = wc + (!content.isEmpty() && !content.endsWith('\n') ? 1 : 0);
        QCOMPARE(index.lineCount(), expected);
        // Every line reads back as the bytes between the newlines (a CRLF's \r dropped).
        QList<QByteArray> want = content.split('\n');
        if (content.endsWith('\n') || content.isEmpty()) want.removeLast();
        for (QByteArray &line : want) {
            if (line.endsWith('\r')) line.chop(1);
        }
        const auto lines = index.readLines(0, index.lineCount());
        QVERIFY(lines);
        QCOMPARE(lines->size(), want.size());
        QVERIFY(*lines == want);
        // Offsets map back to their lines.
        for (qint64 l = 0; l < index.lineCount(); l += std::max<qint64>(1, index.lineCount() / 50)) {
            QCOMPARE(index.lineAt(index.lineStart(l)), l);
            QCOMPARE(index.lineAt(index.lineEnd(l) - (index.lineEnd(l) > index.lineStart(l) ? 1 : 0)), l);
        }
        QCOMPARE(index.lineAt(content.size()), -1);
    }

    // Expressions with and without a literal every match must contain (the search then runs
    // the expression only on the lines memmem finds with it): the same lines as grep -E.
    void expressionsWithARequiredLiteralLikeGrep_data()
    {
        QTest::addColumn<QString>("pattern");
        QTest::newRow("optional char") << QStringLiteral("step 1?4 ");
        QTest::newRow("optional by braces") << QStringLiteral("step 1{0,1}2[0-9] ");
        QTest::newRow("repeated char") << QStringLiteral("ste+p 9");
        QTest::newRow("group before") << QStringLiteral("(INFO|DEBUG) step 4[0-9]{2}");
        QTest::newRow("top-level alternation") << QStringLiteral("WARNING step 1|ERROR step 2");
        QTest::newRow("anchored end") << QStringLiteral("loss=nan$");
        QTest::newRow("escaped paren") << QStringLiteral("\\(most recent");
        QTest::newRow("dot star") << QStringLiteral("Traceback.*last\\)$");
        QTest::newRow("class plus") << QStringLiteral("^[0-9]+5 ERROR step");
        QTest::newRow("optional group") << QStringLiteral("step 7(7)? ");
        QTest::newRow("short literal") << QStringLiteral("^1 ");
    }

    void expressionsWithARequiredLiteralLikeGrep()
    {
        QFETCH(QString, pattern);
        const QString path = m_dir.filePath(QStringLiteral("must.log"));
        static const QByteArray content = generated(50000, "\n") + generated(500, "\r\n") + QByteArray("no newline loss=nan");
        write(path, content);
        LineIndex index(path);
        QVERIFY(complete(index.update()));
        const QList<qint64> expected = grepLines(path, {QStringLiteral("-E")}, pattern);
        QVERIFY(!expected.isEmpty());
        QCOMPARE(search(index, pattern, true), expected);
    }

    // Expressions mean characters, not bytes, on valid UTF-8 (Hyperscan in UTF-8 mode) and on
    // a file with invalid bytes (QRegularExpression), the same lines either way: grep in the C
    // locale cannot be the reference here, so the lines are written out.
    void expressionsOverCharacters_data()
    {
        QTest::addColumn<QByteArray>("tail");
        QTest::newRow("valid utf-8") << QByteArray("last line\n");
        QTest::newRow("invalid bytes") << QByteArray("last \xff\xfe line\n");
    }

    void expressionsOverCharacters()
    {
        QFETCH(QByteArray, tail);
        const QString path = m_dir.filePath(QStringLiteral("unicode.log"));
        write(path, QByteArray("0 naïve café\n1 naive cafe\n2 NAÏVE CAFÉ\n3 x\xc3\xa9y and xy\n4 δ-loss 0.5\n5 a\tb\n") + tail);
        LineIndex index(path);
        QVERIFY(complete(index.update()));
        QCOMPARE(search(index, QStringLiteral("caf.$"), true), QList<qint64>({0, 1}));
        QCOMPARE(search(index, QStringLiteral("\\bna\\w+ve\\b"), true), QList<qint64>({0, 1}));
        QCOMPARE(search(index, QStringLiteral("naïve caf[éE]"), true, true), QList<qint64>({0, 2}));
        QCOMPARE(search(index, QStringLiteral("x.y"), true), QList<qint64>({3}));
        QCOMPARE(search(index, QStringLiteral("^[0-9] [α-ω]-loss [0-9.]+$"), true), QList<qint64>({4}));
        QCOMPARE(search(index, QStringLiteral("a\\sb"), true), QList<qint64>({5}));
        // Not across lines, whatever could match a newline.
        QCOMPARE(search(index, QStringLiteral("cafe\\s+2"), true), QList<qint64>());
        QCOMPARE(search(index, QStringLiteral("CAFÉ[^x]+3"), true), QList<qint64>());
    }

    void searchesLikeGrep()
    {
        const QString path = m_dir.filePath(QStringLiteral("search.log"));
        QByteArray content = generated(200000, "\n");
        content += generated(1000, "\r\n");
        content += QByteArray("\xff\xfe ERROR in invalid bytes\n") + QByteArray(3 * 1024 * 1024, 'y') + " ERROR in a long line\nno newline at the end ERROR";
        write(path, content);
        LineIndex index(path);
        QVERIFY(complete(index.update()));
        QCOMPARE(search(index, QStringLiteral("ERROR")), grepLines(path, {QStringLiteral("-F")}, QStringLiteral("ERROR")));
        QCOMPARE(search(index, QStringLiteral("Traceback (most")), grepLines(path, {QStringLiteral("-F")}, QStringLiteral("Traceback (most")));
        QCOMPARE(search(index, QStringLiteral("error"), false, true), grepLines(path, {QStringLiteral("-F"), QStringLiteral("-i")}, QStringLiteral("error")));
        QCOMPARE(search(index, QStringLiteral("^1[0-9]*5 (WARNING|ERROR) step [0-9]+ loss"), true),
                 grepLines(path, {QStringLiteral("-E")}, QStringLiteral("^1[0-9]*5 (WARNING|ERROR) step [0-9]+ loss")));
        QCOMPARE(search(index, QStringLiteral("step 99[0-9]"), true, true), grepLines(path, {QStringLiteral("-E"), QStringLiteral("-i")}, QStringLiteral("step 99[0-9]")));
        // A pattern that could span lines matches within one, as grep's do.
        QCOMPARE(search(index, QStringLiteral("nan\\s+[0-9]+ ERROR"), true), grepLines(path, {QStringLiteral("-E")}, QStringLiteral("nan[[:space:]]+[0-9]+ ERROR")));
        QVERIFY(!search(index, QStringLiteral("ERROR")).isEmpty());
        // A bad expression is refused with where it is wrong.
        SearchOptions bad;
        bad.pattern = QStringLiteral("step (");
        bad.regex = true;
        QVERIFY(!checkPattern(bad));
        QVERIFY(checkPattern(bad).error().message.contains(QStringLiteral("not valid")));
    }

    void cancelStopsASearch()
    {
        const QString path = m_dir.filePath(QStringLiteral("cancel.log"));
        write(path, generated(400000, "\n"));
        LineIndex index(path);
        QVERIFY(complete(index.update()));
        std::atomic<bool> cancel{false};
        SearchOptions options;
        options.pattern = QStringLiteral("step [0-9]+");
        options.regex = true;
        options.taskBytes = 256 * 1024;   // about 40 tasks
        qint64 reported = 0;
        const auto outcome = searchLines(index, options, &cancel, [&](qint64 done, qint64) {
            reported = done;
            cancel = true;
        });
        QVERIFY(outcome);
        QVERIFY(outcome->cancelled);
        QVERIFY(reported > 0);
        QVERIFY2(outcome->lines.size() < index.lineCount(), qPrintable(QString::number(outcome->lines.size())));
        // The index's own cancel: what was indexed stays, and the next update goes on.
        LineIndex partial(path);
        QVERIFY(cancelled(partial.update([](qint64, qint64) { return false; })));
        QVERIFY(partial.indexedBytes() > 0);
        QVERIFY(complete(partial.update()));
        QCOMPARE(partial.lineCount(), wcLines(path));
    }

    void followsAGrowingFileAndATruncatedOne()
    {
        const QString path = m_dir.filePath(QStringLiteral("grow.log"));
        write(path, "one\ntwo\npart");
        LineIndex index(path);
        QVERIFY(complete(index.update()));
        QCOMPARE(index.lineCount(), 3);
        // The open last line grows, then more lines come.
        write(path, "ial line\nfour\n", QIODevice::Append);
        QVERIFY(complete(index.update()));
        QCOMPARE(index.lineCount(), 4);
        QCOMPARE(index.readLines(2, 2).value(), (QList<QByteArray>{"partial line", "four"}));
        write(path, "five", QIODevice::Append);
        QVERIFY(complete(index.update()));
        QCOMPARE(index.lineCount(), 5);
        QCOMPARE(index.readLines(4, 1).value(), QList<QByteArray>{"five"});
        // Rotated: shorter than before, indexed again.
        write(path, "new\n");
        QVERIFY(complete(index.update()));
        QCOMPARE(index.lineCount(), 1);
        QCOMPARE(index.readLines(0, 1).value(), QList<QByteArray>{"new"});
        QVERIFY(index.memoryBytes() > 0);
    }
};

QTEST_GUILESS_MAIN(TestLogIndex)
#include "tst_logindex.moc"
