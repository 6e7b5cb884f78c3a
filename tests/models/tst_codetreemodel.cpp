// The code folder tree of the submission wizard: every path the Capsule walk sees, sizes summed
// into folders from packed files only, and each excluded path greyed with the pattern that
// dropped it (a user pattern, a .gitignore, a default, version control data).

#include "core/job/capsule.h"
#include "models/codetreemodel.h"
#include "models/tones.h"
#include "support/testutil.h"

#include <QAbstractItemModelTester>
#include <QColor>
#include <QDir>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using Models::CodeTreeModel;

class TestCodeTreeModel : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void listsWhatTheCapsulePacksAndWhy()
    {
        QTemporaryDir dir;
        const QString root = dir.filePath(QStringLiteral("code"));
        QVERIFY(QDir().mkpath(root + QStringLiteral("/configs")));
        QVERIFY(QDir().mkpath(root + QStringLiteral("/logs")));
        QVERIFY(QDir().mkpath(root + QStringLiteral("/.git")));
        QVERIFY(QDir().mkpath(root + QStringLiteral("/__pycache__")));
        QVERIFY(Testing::writeFile(root + QStringLiteral("/configs/run.yaml"), QByteArray(100, 'a')));
        QVERIFY(Testing::writeFile(root + QStringLiteral("/train.py"), QByteArray(50, 'b')));
        QVERIFY(Testing::writeFile(root + QStringLiteral("/notes.ipynb"), QByteArray(7, 'c')));
        QVERIFY(Testing::writeFile(root + QStringLiteral("/logs/.gitignore"), "*.log\n"));
        QVERIFY(Testing::writeFile(root + QStringLiteral("/logs/run.log"), QByteArray(30, 'd')));
        QVERIFY(Testing::writeFile(root + QStringLiteral("/__pycache__/x.pyc"), "x"));

        Job::CapsuleOptions options;
        options.sourceDir = root;
        options.runnerPex = QByteArray(1000, 'r');
        options.excludePatterns = {QStringLiteral("*.ipynb")};
        const auto listing = Job::listCapsuleTree(options);
        QVERIFY2(listing, listing ? "" : qPrintable(listing.error().message));
        // Packed: run.yaml, train.py, logs/.gitignore; plus jobspec.json, runner.pex, manifest.json.
        QCOMPARE(listing->fileCount, 6);
        QCOMPARE(listing->bytes, 100 + 50 + 6 + 1000);

        CodeTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setListing(*listing);
        QStringList top;
        for (int r = 0; r < model.rowCount(); ++r) top << model.index(r, 0).data().toString();
        QCOMPARE(top, (QStringList{QStringLiteral(".git/"), QStringLiteral("__pycache__/"), QStringLiteral("configs/"), QStringLiteral("logs/"),
                                   QStringLiteral("notes.ipynb"), QStringLiteral("train.py")}));

        const QModelIndex notebook = model.indexOf(QStringLiteral("notes.ipynb"));
        QVERIFY(notebook.isValid());
        QVERIFY(notebook.data(CodeTreeModel::ExcludedRole).toBool());
        QCOMPARE(notebook.siblingAtColumn(CodeTreeModel::ExcludedByColumn).data().toString(), QStringLiteral("excluded: *.ipynb (exclude pattern)"));
        // Drawn in the palette's quiet colour; what is packed keeps the view's own.
        QCOMPARE(notebook.data(Qt::ForegroundRole).value<QColor>(), Tones::current().color(QPalette::PlaceholderText));
        QVERIFY(!model.indexOf(QStringLiteral("train.py")).data(Qt::ForegroundRole).isValid());
        QCOMPARE(model.indexOf(QStringLiteral("logs/run.log")).siblingAtColumn(CodeTreeModel::ExcludedByColumn).data().toString(),
                 QStringLiteral("excluded: *.log (.gitignore in logs/)"));
        QCOMPARE(model.indexOf(QStringLiteral("__pycache__")).siblingAtColumn(CodeTreeModel::ExcludedByColumn).data().toString(),
                 QStringLiteral("excluded: __pycache__/ (default)"));
        QCOMPARE(model.indexOf(QStringLiteral(".git")).siblingAtColumn(CodeTreeModel::ExcludedByColumn).data().toString(),
                 QStringLiteral("excluded: version control data (never packed)"));
        // An excluded folder's contents are not walked, as git does not.
        QCOMPARE(model.rowCount(model.indexOf(QStringLiteral("__pycache__"))), 0);

        const QModelIndex train = model.indexOf(QStringLiteral("train.py"));
        QVERIFY(!train.data(CodeTreeModel::ExcludedRole).toBool());
        QVERIFY(!train.data(Qt::ForegroundRole).isValid());
        QCOMPARE(train.siblingAtColumn(CodeTreeModel::SizeColumn).data().toString(), QStringLiteral("50 bytes"));
        // Folders sum their packed files: logs/ holds its .gitignore (6 bytes), not the log.
        QCOMPARE(model.indexOf(QStringLiteral("logs")).data(CodeTreeModel::SizeRole).toLongLong(), 6);
        QCOMPARE(model.indexOf(QStringLiteral("configs")).data(CodeTreeModel::SizeRole).toLongLong(), 100);
        QCOMPARE(model.indexOf(QStringLiteral("configs/run.yaml")).data(CodeTreeModel::PathRole).toString(), QStringLiteral("configs/run.yaml"));

        // A second listing replaces the tree (a reset the tester checks), and clear() empties it.
        options.excludePatterns.clear();
        model.setListing(*Job::listCapsuleTree(options));
        QVERIFY(!model.indexOf(QStringLiteral("notes.ipynb")).data(CodeTreeModel::ExcludedRole).toBool());
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TestCodeTreeModel)
#include "tst_codetreemodel.moc"
