// The logs viewer's model over the line index, under QAbstractItemModelTester: rows as `wc -l`
// counts them (more than one indexing slice), lines read back, severities and the progress
// marker, a followed file's appended lines inserted and its growing last line changed in place,
// a truncated file reset.

#include "models/loglinesmodel.h"

#include <QAbstractItemModelTester>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using Starforge::Models::LogLinesModel;

namespace {

void append(const QString &path, const QByteArray &bytes, QIODevice::OpenMode mode = QIODevice::Append)
{
    QFile f(path);
    QVERIFY(f.open(mode));
    QCOMPARE(f.write(bytes), bytes.size());
}

} // namespace

class TestLogLinesModel : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;

private Q_SLOTS:
    void severitiesAndMarkers()
    {
        QCOMPARE(LogLinesModel::severityOf(u"Traceback (most recent call last):"), LogLinesModel::Severity::Traceback);
        QCOMPARE(LogLinesModel::severityOf(u"2026-12-04 ERROR worker died"), LogLinesModel::Severity::Error);
        QCOMPARE(LogLinesModel::severityOf(u"torch.OutOfMemoryError: CUDA out of memory."), LogLinesModel::Severity::Error);
        QCOMPARE(LogLinesModel::severityOf(u"WARNING: the GCS is slow"), LogLinesModel::Severity::Warning);
        QCOMPARE(LogLinesModel::severityOf(u"Step 3/10"), LogLinesModel::Severity::Plain);
        QCOMPARE(LogLinesModel::severityOf(u"STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": 3, \"total\": 10}"), LogLinesModel::Severity::Progress);
        QCOMPARE(LogLinesModel::progressMarker(u"STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": 3, \"total\": 10}"), QStringLiteral("▸ step 3/10"));
        QCOMPARE(LogLinesModel::progressMarker(u"STARFORGE_PROGRESS {\"kind\": \"metric\", \"name\": \"Loss\", \"value\": 0.5}"), QStringLiteral("▸ Loss 0.5"));
        QCOMPARE(LogLinesModel::progressMarker(u"STARFORGE_PROGRESS {\"kind\": \"checkpoint\", \"step\": 20}"), QStringLiteral("▸ checkpoint at step 20"));
        QCOMPARE(LogLinesModel::progressMarker(u"STARFORGE_PROGRESS not json"), QStringLiteral("STARFORGE_PROGRESS not json"));
    }

    void aLargeLogInSlices()
    {
        // About 150 MB: three indexing slices, rows inserted after each.
        const QString path = m_dir.filePath(QStringLiteral("large.log"));
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            QByteArray block;
            for (int i = 0; i < 100000; ++i) block += "INFO step " + QByteArray::number(i) + " of a long run, with some words after it\n";
            for (int r = 0; r < 25; ++r) QCOMPARE(f.write(block), block.size());
        }
        LogLinesModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.setFile(path);
        QVERIFY(model.isIndexing());
        QVERIFY(model.rowCount() > 0);   // the first slice's rows at once
        QVERIFY(model.rowCount() < 2500000);
        QTRY_VERIFY_WITH_TIMEOUT(!model.isIndexing(), 30000);
        QCOMPARE(model.rowCount(), 2500000);
        QVERIFY(inserted.count() >= 3);
        QCOMPARE(model.index(0).data().toString(), QStringLiteral("INFO step 0 of a long run, with some words after it"));
        QCOMPARE(model.index(2499999).data().toString(), QStringLiteral("INFO step 99999 of a long run, with some words after it"));
        QCOMPARE(model.index(1234567).data(LogLinesModel::LineNumberRole).toLongLong(), 1234568);
        // The index, not the file, is what is held.
        QVERIFY2(model.lineIndex().memoryBytes() < QFileInfo(path).size() / 10, qPrintable(QString::number(model.lineIndex().memoryBytes())));
    }

    void followsAGrowingFile()
    {
        const QString path = m_dir.filePath(QStringLiteral("follow.log"));
        append(path, "start\nSTARFORGE_PROGRESS {\"kind\": \"step\", \"step\": 1, \"total\": 2}\npart", QIODevice::WriteOnly);
        LogLinesModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFile(path);
        QTRY_VERIFY(!model.isIndexing());
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.index(1).data().toString(), QStringLiteral("▸ step 1/2"));
        QCOMPARE(model.index(1).data(LogLinesModel::RawTextRole).toString(), QStringLiteral("STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": 1, \"total\": 2}"));
        QCOMPARE(model.index(1).data(LogLinesModel::SeverityRole).value<LogLinesModel::Severity>(), LogLinesModel::Severity::Progress);
        QCOMPARE(model.index(2).data().toString(), QStringLiteral("part"));

        // Whole lines appended to a page already read: the new rows read their text.
        QCOMPARE(model.index(0).data().toString(), QStringLiteral("start"));
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        append(path, "ial line\nTraceback (most recent call last):\nERROR boom\n");
        model.refresh();
        QTRY_VERIFY(!model.isIndexing());
        QCOMPARE(model.rowCount(), 5);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.first().at(0).toModelIndex().row(), 2);
        QCOMPARE(model.index(2).data().toString(), QStringLiteral("partial line"));
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(model.index(3).data(LogLinesModel::SeverityRole).value<LogLinesModel::Severity>(), LogLinesModel::Severity::Traceback);
        QCOMPARE(model.index(4).data(LogLinesModel::SeverityRole).value<LogLinesModel::Severity>(), LogLinesModel::Severity::Error);
        QCOMPARE(reset.count(), 0);

        append(path, "one more\n");
        model.refresh();
        QTRY_VERIFY(!model.isIndexing());
        QCOMPARE(model.rowCount(), 6);
        QCOMPARE(model.index(5).data().toString(), QStringLiteral("one more"));

        // Rotated under the same name: shorter, the model starts again.
        append(path, "new file\n", QIODevice::WriteOnly);
        model.refresh();
        QTRY_VERIFY(!model.isIndexing());
        QCOMPARE(reset.count(), 1);
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.index(0).data().toString(), QStringLiteral("new file"));

        // A file that is gone is said.
        QSignalSpy failed(&model, &LogLinesModel::failed);
        model.setFile(m_dir.filePath(QStringLiteral("missing.log")));
        QTRY_COMPARE(failed.count(), 1);
        QVERIFY(failed.first().at(0).toString().contains(QStringLiteral("missing.log")));
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TestLogLinesModel)
#include "tst_loglinesmodel.moc"
