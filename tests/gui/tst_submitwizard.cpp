// The submission wizard driven as a person drives it (typing, clicks, keys):
//  - bad input (a job name, a RAY_ variable, a stray override) keeps Next off and shows the
//    core's message, and fixing it lets the person on;
//  - on the sandbox, from the main window: Ctrl+O opens a JobSpec prefilled, the fit verdict
//    changes when another pod takes GPUs and changes back when it goes, the review shows the
//    RayJob, Submit creates the job and the Jobs panel selects it; the same folder again
//    uploads 0 bytes; a failed submit keeps the wizard and its pages and Try again submits the
//    same job id; Cancel during the create closes the wizard and leaves no RayJob;
//  - File › New Job (Ctrl+N), a folder dropped on the window, Open JobSpec… (Ctrl+O) of a bad
//    file (its problems shown, nothing opened), Escape;
//  - `starforge JOBSPEC` as a process opens the wizard on the JobSpec.

#include "core/config/embeddedsandbox.h"
#include "core/config/profilemanager.h"
#include "core/job/tracker.h"
#include "core/session/session.h"
#include "gui/jobs/jobspanel.h"
#include "gui/mainwindow.h"
#include "models/jobsmodel.h"
#include "gui/wizard/resourcespage.h"
#include "gui/wizard/reviewpage.h"
#include "gui/wizard/submitwizard.h"
#include "support/memorysecretstore.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"
#include "support/testutil.h"

#include <QAbstractButton>
#include <QApplication>
#include <QCheckBox>
#include <QContextMenuEvent>
#include <QComboBox>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QStatusBar>
#include <QTableView>
#include <QMimeData>
#include <QPointer>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "scriptedprompts.h"

using namespace Starforge;
using Gui::SubmitWizard;

namespace {

// A copy of the example job (examples/grpo-math) in dir, so nothing is written in the source tree.
QString copyExample(const QString &dir)
{
    const QString to = QDir(dir).filePath(QStringLiteral("grpo-math"));
    QDir().mkpath(to + QStringLiteral("/configs"));
    for (const QString &file : {QStringLiteral("jobspec.json"), QStringLiteral("configs/grpo_math_1B.yaml")}) {
        QFile::copy(QStringLiteral(SF_SOURCE_DIR "/examples/grpo-math/") + file, to + u'/' + file);
    }
    return to;
}

QAbstractButton *next(SubmitWizard *wizard)
{
    return wizard->button(QWizard::NextButton);
}

QString labelText(QWidget *in, const char *name)
{
    auto *label = in->findChild<QLabel *>(QLatin1String(name));
    return label && label->isVisible() ? label->text() : QString();
}

} // namespace

class TestSubmitWizard : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;

    // Next through Code, Recipe and Resources as they are, until the review is ready.
    static SubmitWizard *reachReview(SubmitWizard *wizard)
    {
        if (!wizard || !QTest::qWaitForWindowActive(wizard)) return nullptr;
        for (int page = 0; page < 3; ++page) {
            if (!QTest::qWaitFor([&] { return next(wizard)->isEnabled(); }, 20000)) return nullptr;
            const int at = wizard->currentId();
            QTest::keyClick(wizard, Qt::Key_N, Qt::AltModifier);
            if (!QTest::qWaitFor([&] { return wizard->currentId() != at; }, 5000)) {
                qWarning() << "Alt+N did nothing on page" << at << "focus" << QApplication::focusWidget();
                return nullptr;
            }
        }
        if (QTest::qWaitFor([&] { return wizard->currentId() == SubmitWizard::ReviewPageId && next(wizard)->isEnabled(); }, 60000)) return wizard;
        qWarning() << "the wizard is on page" << wizard->currentId();
        return nullptr;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
    }

    void badInputBlocksNext()
    {
        const QString code = m_dir.filePath(QStringLiteral("my_Code"));
        QVERIFY(QDir().mkpath(code + QStringLiteral("/configs")));
        QVERIFY(Testing::writeFile(code + QStringLiteral("/configs/run.yaml"), "grpo: {}\n"));
        QVERIFY(Testing::writeFile(code + QStringLiteral("/train.py"), "print('hi')\n"));
        SubmitWizard wizard(nullptr, SubmitWizard::specForFolder(code));
        wizard.show();
        QVERIFY(QTest::qWaitForWindowActive(&wizard));

        // Page 1: the name, checked as it is typed.
        auto *name = wizard.findChild<QLineEdit *>(QStringLiteral("jobNameEdit"));
        QCOMPARE(name->text(), QStringLiteral("my-code"));   // from the folder's name
        QTRY_VERIFY(next(&wizard)->isEnabled());
        QTRY_VERIFY(labelText(&wizard, "capsuleSummary").startsWith(QStringLiteral("Capsule: 5 files")));
        QTest::mouseClick(name, Qt::LeftButton);
        QTest::keyClick(name, Qt::Key_A, Qt::ControlModifier);
        QTest::keyClicks(name, QStringLiteral("Bad_Name"));
        QVERIFY(!next(&wizard)->isEnabled());
        QVERIFY2(labelText(&wizard, "jobNameProblem").startsWith(QStringLiteral("name: \"Bad_Name\" must be 1-40 characters of lowercase letters")),
                 qPrintable(labelText(&wizard, "jobNameProblem")));
        QTest::keyClick(name, Qt::Key_A, Qt::ControlModifier);
        QTest::keyClicks(name, QStringLiteral("demo"));
        QVERIFY(next(&wizard)->isEnabled());
        QVERIFY(labelText(&wizard, "jobNameProblem").isEmpty());
        QTest::mouseClick(next(&wizard), Qt::LeftButton);
        QCOMPARE(wizard.currentId(), int(SubmitWizard::RecipePageId));

        // Page 2: no config yet is a problem; the folder's YAML files are offered.
        QVERIFY(!next(&wizard)->isEnabled());
        QVERIFY2(labelText(&wizard, "recipeProblems").contains(QStringLiteral("recipe.config: required")), qPrintable(labelText(&wizard, "recipeProblems")));
        auto *config = wizard.findChild<QComboBox *>(QStringLiteral("configCombo"));
        QCOMPARE(config->count(), 1);
        QTest::mouseClick(config->lineEdit(), Qt::LeftButton);
        QTest::keyClicks(config->lineEdit(), QStringLiteral("configs/nothere.yaml"));
        QVERIFY2(labelText(&wizard, "recipeProblems").contains(QStringLiteral("is not a packed file of the code folder")),
                 qPrintable(labelText(&wizard, "recipeProblems")));
        QTest::keyClick(config->lineEdit(), Qt::Key_A, Qt::ControlModifier);
        QTest::keyClicks(config->lineEdit(), QStringLiteral("configs/run.yaml"));
        QCOMPARE(config->currentText(), QStringLiteral("configs/run.yaml"));
        QTRY_VERIFY(next(&wizard)->isEnabled());

        // An environment variable Ray owns: refused in its row, with the core's words.
        auto *env = wizard.findChild<QTableWidget *>(QStringLiteral("envTable"));
        QTest::mouseClick(wizard.findChild<QPushButton *>(QStringLiteral("addEnvButton")), Qt::LeftButton);
        QLineEdit *editor = nullptr;
        QTRY_VERIFY((editor = env->findChild<QLineEdit *>()) && editor->hasFocus());
        QTest::keyClicks(editor, QStringLiteral("RAY_ADDRESS"));
        QTest::keyClick(editor, Qt::Key_Return);
        // The delegate commits on the event loop's next turn.
        QTRY_VERIFY(!next(&wizard)->isEnabled());
        QVERIFY2(labelText(&wizard, "recipeProblems").contains(QStringLiteral("env.RAY_ADDRESS: names starting with RAY_ or FORGE_ are set by Ray and Starforge")),
                 qPrintable(labelText(&wizard, "recipeProblems")));
        QVERIFY(env->item(0, 0)->toolTip().contains(QStringLiteral("choose another name")));
        // F2 on the cell, a new name: accepted.
        env->setFocus();
        env->setCurrentCell(0, 0);
        QTest::keyClick(env, Qt::Key_F2);
        QTRY_VERIFY((editor = env->findChild<QLineEdit *>()) && editor->hasFocus());
        QTest::keyClick(editor, Qt::Key_A, Qt::ControlModifier);
        QTest::keyClicks(editor, QStringLiteral("MY_ADDRESS"));
        QTest::keyClick(editor, Qt::Key_Return);
        QTRY_VERIFY(next(&wizard)->isEnabled());
        QVERIFY(env->item(0, 0)->toolTip().isEmpty());

        // A variable from a Kubernetes Secret, typed cell by cell (Tab moves on): a name that is
        // not a variable name is refused in its row; the fixed one lands in the JobSpec.
        auto *secretEnv = wizard.findChild<QTableWidget *>(QStringLiteral("secretEnvTable"));
        QTest::mouseClick(wizard.findChild<QPushButton *>(QStringLiteral("addSecretEnvButton")), Qt::LeftButton);
        QTRY_VERIFY((editor = secretEnv->findChild<QLineEdit *>()) && editor->hasFocus());
        QTest::keyClicks(editor, QStringLiteral("1HF TOKEN"));
        QTest::keyClick(editor, Qt::Key_Tab);
        QTRY_VERIFY((editor = secretEnv->findChild<QLineEdit *>()) && editor->hasFocus() && secretEnv->currentColumn() == 1);
        QTest::keyClicks(editor, QStringLiteral("hf-credentials"));
        QTest::keyClick(editor, Qt::Key_Tab);
        QTRY_VERIFY((editor = secretEnv->findChild<QLineEdit *>()) && editor->hasFocus() && secretEnv->currentColumn() == 2);
        QTest::keyClicks(editor, QStringLiteral("token"));
        QTest::keyClick(editor, Qt::Key_Return);
        QTRY_VERIFY(!next(&wizard)->isEnabled());
        QVERIFY2(labelText(&wizard, "recipeProblems").contains(QStringLiteral("secretEnv.1HF TOKEN: not a valid environment variable name")),
                 qPrintable(labelText(&wizard, "recipeProblems")));
        secretEnv->setFocus();
        secretEnv->setCurrentCell(0, 0);
        QTest::keyClick(secretEnv, Qt::Key_F2);
        QTRY_VERIFY((editor = secretEnv->findChild<QLineEdit *>()) && editor->hasFocus());
        QTest::keyClick(editor, Qt::Key_A, Qt::ControlModifier);
        QTest::keyClicks(editor, QStringLiteral("HF_TOKEN"));
        QTest::keyClick(editor, Qt::Key_Return);
        QTRY_VERIFY(next(&wizard)->isEnabled());
        QCOMPARE(wizard.spec().secretEnv.value(QStringLiteral("HF_TOKEN")), (Job::SecretRef{QStringLiteral("hf-credentials"), QStringLiteral("token")}));

        // An override that is not Hydra's grammar, then removed.
        QTest::mouseClick(wizard.findChild<QPushButton *>(QStringLiteral("addOverrideButton")), Qt::LeftButton);
        auto *overrides = wizard.findChild<QListWidget *>(QStringLiteral("overridesList"));
        QTRY_VERIFY((editor = overrides->findChild<QLineEdit *>()) && editor->hasFocus());
        QTest::keyClicks(editor, QStringLiteral("max steps 10"));
        QTest::keyClick(editor, Qt::Key_Return);
        // The delegate commits on the event loop's next turn.
        QTRY_VERIFY(!next(&wizard)->isEnabled());
        QVERIFY2(labelText(&wizard, "recipeProblems").contains(QStringLiteral("recipe.overrides[0]: Hydra cannot parse \"max steps 10\": token recognition error at: ' '")),
                 qPrintable(labelText(&wizard, "recipeProblems")));
        QTest::mouseClick(wizard.findChild<QPushButton *>(QStringLiteral("removeOverrideButton")), Qt::LeftButton);
        QVERIFY(next(&wizard)->isEnabled());
        QTest::mouseClick(next(&wizard), Qt::LeftButton);
        QCOMPARE(wizard.currentId(), int(SubmitWizard::ResourcesPageId));

        // Page 3 without a cluster: no series to choose, said why, Next off.
        QVERIFY(!next(&wizard)->isEnabled());
        QCOMPARE(labelText(&wizard, "capacityNote"), QStringLiteral("Not connected: the fit verdict appears once the cluster answers."));
        QVERIFY2(labelText(&wizard, "resourcesProblems").contains(QStringLiteral("pools[0].series: \"\" is not a node label value")),
                 qPrintable(labelText(&wizard, "resourcesProblems")));
        // Back keeps what was typed.
        QTest::mouseClick(wizard.button(QWizard::BackButton), Qt::LeftButton);
        QCOMPARE(wizard.spec().env.value(QStringLiteral("MY_ADDRESS")), QString());
        QVERIFY(wizard.spec().env.contains(QStringLiteral("MY_ADDRESS")));
        QCOMPARE(wizard.spec().name, QStringLiteral("demo"));
    }

    // The resources page offers a generation pool only to the algorithms that can use one, says
    // why otherwise, and cautions that pools of two series are a request Ray may not honour.
    void generationPoolFollowsTheAlgorithm()
    {
        const QString code = m_dir.filePath(QStringLiteral("pools"));
        QVERIFY(QDir().mkpath(code + QStringLiteral("/configs")));
        QVERIFY(Testing::writeFile(code + QStringLiteral("/configs/run.yaml"), "grpo: {}\n"));
        Job::JobSpec spec = SubmitWizard::specForFolder(code);
        spec.recipe.algorithm = QStringLiteral("grpo");
        spec.recipe.script.clear();
        spec.recipe.config = QStringLiteral("configs/run.yaml");
        spec.pools = {Job::Pool{QStringLiteral("train"), QStringLiteral("h200"), 1, 8}, Job::Pool{QStringLiteral("gen"), QStringLiteral("h100"), 1, 8}};
        SubmitWizard wizard(nullptr, spec);
        wizard.show();
        QVERIFY(QTest::qWaitForWindowActive(&wizard));
        QTRY_VERIFY(next(&wizard)->isEnabled());
        QTest::mouseClick(next(&wizard), Qt::LeftButton);
        QTRY_VERIFY(next(&wizard)->isEnabled());
        QTest::mouseClick(next(&wizard), Qt::LeftButton);
        QCOMPARE(wizard.currentId(), int(SubmitWizard::ResourcesPageId));
        // No session, so no profile claims: the corpus box is off, saying why.
        QVERIFY(!wizard.findChild<QCheckBox *>(QStringLiteral("corpusCheck"))->isEnabled());
        QCOMPARE(labelText(&wizard, "corpusNote"), QStringLiteral("Off: the profile has no corpus volume claim (FORGE_K8S_CORPUS_PVC)."));
        QVERIFY2(labelText(&wizard, "poolsWarning").contains(QStringLiteral("training on h200 and generation on h100 is a request Ray may not honour")),
                 qPrintable(labelText(&wizard, "poolsWarning")));
        auto *add = wizard.findChild<QPushButton *>(QStringLiteral("addPoolButton"));
        auto *remove = wizard.findChild<QPushButton *>(QStringLiteral("removePoolButton"));
        QVERIFY(!add->isEnabled());   // two pools already
        QTest::mouseClick(remove, Qt::LeftButton);
        QTRY_VERIFY(labelText(&wizard, "poolsWarning").isEmpty());
        QVERIFY(add->isEnabled());

        // Back to the recipe: sft has no generation, so no second pool is offered.
        QTest::mouseClick(wizard.button(QWizard::BackButton), Qt::LeftButton);
        auto *entry = wizard.findChild<QComboBox *>(QStringLiteral("recipeEntryCombo"));
        QVERIFY(entry);
        entry->setCurrentIndex(entry->findData(QStringLiteral("sft")));
        QTRY_VERIFY(next(&wizard)->isEnabled());
        QTest::mouseClick(next(&wizard), Qt::LeftButton);
        QVERIFY(!add->isEnabled());
        QVERIFY2(add->toolTip().contains(QStringLiteral("sft runs on one pool")), qPrintable(add->toolTip()));

        // The review says before submitting that this config keeps no checkpoint to chat with.
        QTRY_VERIFY(next(&wizard)->isEnabled());
        QTest::mouseClick(next(&wizard), Qt::LeftButton);
        QCOMPARE(wizard.currentId(), int(SubmitWizard::ReviewPageId));
        QVERIFY2(labelText(&wizard, "reviewWarnings").startsWith(QStringLiteral("checkpoints: the config does not turn checkpointing on")),
                 qPrintable(labelText(&wizard, "reviewWarnings")));
    }

    void submitsFromTheWindowOnTheSandbox()
    {
        std::unique_ptr<Sandbox::Sandbox> sandbox;
        std::unique_ptr<Testing::SandboxHttp> http;
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h200:1x8,cpu:1x0");
        options.presentImages = {Testing::jobTestImage()};
        QString error;
        QVERIFY2(Testing::startSandbox(sandbox, http, options, &error), qPrintable(error));
        auto connection = Config::SandboxConnection::read(options.connectionFile);
        QVERIFY(connection);
        Config::ProfileStore store(m_dir.filePath(QStringLiteral("p.ini")));
        Testing::MemorySecretStore secrets;
        Config::ProfileManager manager(&store, &secrets);
        Testing::ScriptedPrompts prompts;
        QVERIFY(store.addProfile(QStringLiteral("sandbox")).ok());
        for (auto it = connection->settings.cbegin(); it != connection->settings.cend(); ++it) {
            QVERIFY(store.setValue(QStringLiteral("sandbox"), it.key(), it.value()).ok());
        }
        QProcessEnvironment environment;
        for (auto it = connection->secrets.cbegin(); it != connection->secrets.cend(); ++it) environment.insert(it.key(), it.value());
        QVERIFY(manager.setActiveProfile(QStringLiteral("sandbox")).ok());

        Gui::MainWindow window(&manager, &prompts, environment);
        window.show();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->isUp(), 20000);
        QTRY_VERIFY_WITH_TIMEOUT(window.jobTracker() && window.jobTracker()->hasSynced(), 20000);
        const QString code = copyExample(m_dir.path());

        // File › Open JobSpec… by its shortcut; the file chooser answers with the example's.
        prompts.answers << QDir(code).filePath(QStringLiteral("jobspec.json"));
        QTest::keyClick(&window, Qt::Key_O, Qt::ControlModifier);
        QTRY_VERIFY(window.wizard());
        SubmitWizard *wizard = window.wizard();
        QVERIFY(prompts.asked.value(0).startsWith(QStringLiteral("file: Open JobSpec")));
        QCOMPARE(wizard->findChild<QLineEdit *>(QStringLiteral("jobNameEdit"))->text(), QStringLiteral("grpo-math"));
        QTRY_VERIFY(next(wizard)->isEnabled());
        QTest::mouseClick(next(wizard), Qt::LeftButton);
        auto *overrides = wizard->findChild<QListWidget *>(QStringLiteral("overridesList"));
        QCOMPARE(overrides->count(), 2);
        QCOMPARE(overrides->item(0)->text(), QStringLiteral("grpo.max_num_steps=200"));
        QCOMPARE(wizard->findChild<QComboBox *>(QStringLiteral("configCombo"))->currentText(), QStringLiteral("configs/grpo_math_1B.yaml"));
        // The profile's image is the default.
        QCOMPARE(wizard->findChild<QLineEdit *>(QStringLiteral("imageEdit"))->placeholderText(), Testing::jobTestImage());
        QTRY_VERIFY(next(wizard)->isEnabled());
        QTest::mouseClick(next(wizard), Qt::LeftButton);

        // Page 3: the series the cluster has, with its free GPUs, and the live verdict.
        auto *resources = qobject_cast<Gui::ResourcesPage *>(wizard->currentPage());
        QVERIFY(resources);
        auto *series = wizard->findChild<QComboBox *>(QStringLiteral("poolSeries0"));
        QTRY_COMPARE(series->currentText(), QStringLiteral("h200 — 8/8 GPUs free"));
        QTRY_COMPARE(resources->verdictOf(0), QStringLiteral("FitsNow"));
        QVERIFY(next(wizard)->isEnabled());
        // The sandbox's profile has a storage claim and a corpus claim: both boxes can be ticked,
        // the corpus left as the example has it (off).
        QVERIFY(wizard->findChild<QCheckBox *>(QStringLiteral("storageCheck"))->isEnabled());
        QVERIFY(wizard->findChild<QCheckBox *>(QStringLiteral("corpusCheck"))->isEnabled());
        QVERIFY(!wizard->findChild<QCheckBox *>(QStringLiteral("corpusCheck"))->isChecked());
        QCOMPARE(labelText(wizard, "corpusNote"), QStringLiteral("Volume claim %1, read-only.").arg(Sandbox::Sandbox::corpusClaim()));
        // Another team's pod takes 4 of the node's GPUs: the job now waits for them.
        const QString pods = QStringLiteral("/api/v1/namespaces/starforge/pods");
        const QJsonObject hog{{QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Pod")},
                              {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("hog")}}},
                              {QStringLiteral("spec"),
                               QJsonObject{{QStringLiteral("nodeSelector"), QJsonObject{{QStringLiteral("starforge/gpu-series"), QStringLiteral("h200")}}},
                                           {QStringLiteral("containers"),
                                            QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("main")},
                                                                   {QStringLiteral("image"), Testing::jobTestImage()},
                                                                   {QStringLiteral("command"), QJsonArray{QStringLiteral("sleep"), QStringLiteral("600")}},
                                                                   {QStringLiteral("resources"),
                                                                    QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QStringLiteral("4")}}}}}}}}}}};
        QCOMPARE(http->send("POST", pods, QJsonDocument(hog).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(resources->verdictOf(0), QStringLiteral("FitsWhenFree"), 15000);
        QVERIFY2(resources->sentenceOf(0).contains(QStringLiteral("h200")), qPrintable(resources->sentenceOf(0)));
        QCOMPARE(series->currentText(), QStringLiteral("h200 — 4/8 GPUs free"));
        QVERIFY(next(wizard)->isEnabled());   // a warning, not an error
        QVERIFY(labelText(wizard, "capacityNote").contains(QStringLiteral("fits once busy GPUs free up")));
        // Two nodes of 8 can never fit on a one-node series: an error.
        auto *nodes = wizard->findChild<QSpinBox *>(QStringLiteral("poolNodes0"));
        nodes->setFocus();
        QTest::keyClick(nodes, Qt::Key_Up);
        QTRY_COMPARE(resources->verdictOf(0), QStringLiteral("NeverFits"));
        QVERIFY(!next(wizard)->isEnabled());
        QVERIFY2(labelText(wizard, "resourcesProblems").contains(QStringLiteral("can never run on this cluster")), qPrintable(labelText(wizard, "resourcesProblems")));
        // The page asks rather than refuses: ticked, the job may go (it would wait as Pending).
        auto *anyway = wizard->findChild<QCheckBox *>(QStringLiteral("submitAnywayCheck"));
        QVERIFY(anyway && anyway->isVisible() && !anyway->isChecked());
        anyway->setFocus();
        QTest::keyClick(anyway, Qt::Key_Space);
        QVERIFY(next(wizard)->isEnabled());
        QTest::keyClick(anyway, Qt::Key_Space);
        QVERIFY(!next(wizard)->isEnabled());
        QTest::keyClick(nodes, Qt::Key_Down);
        QCOMPARE(http->send("DELETE", pods + QStringLiteral("/hog")).status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(resources->verdictOf(0), QStringLiteral("FitsNow"), 15000);
        QVERIFY(next(wizard)->isEnabled());
        QVERIFY(!wizard->findChild<QCheckBox *>(QStringLiteral("submitAnywayCheck"))->isVisible());
        QTest::mouseClick(next(wizard), Qt::LeftButton);

        // Page 4: the RayJob for this job id, and who enforces the deadline.
        auto *review = qobject_cast<Gui::ReviewPage *>(wizard->currentPage());
        QVERIFY(review);
        const QString jobId = wizard->jobId();
        QTRY_VERIFY_WITH_TIMEOUT(next(wizard)->isEnabled(), 60000);
        QVERIFY2(review->rayJobText().contains(QStringLiteral("\"name\": \"grpo-math-%1\"").arg(jobId)), qPrintable(review->rayJobText().left(2000)));
        QVERIFY(review->rayJobText().contains(QStringLiteral("\"kind\": \"RayJob\"")));
        QVERIFY2(labelText(wizard, "reviewDeadline").startsWith(QStringLiteral("Pre-running deadline: ")), qPrintable(labelText(wizard, "reviewDeadline")));
        QVERIFY(labelText(wizard, "reviewCapsule").startsWith(QStringLiteral("Capsule ")));
        QCOMPARE(next(wizard)->text(), QStringLiteral("S&ubmit"));

        // Submit: the wizard closes and the Jobs panel selects the new job.
        QString bytesAtEnd;
        connect(wizard, &SubmitWizard::submitted, this, [&] { bytesAtEnd = labelText(wizard, "submitBytes"); });
        QTest::mouseClick(next(wizard), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!window.wizard(), 60000);
        QVERIFY2(bytesAtEnd.endsWith(QStringLiteral("uploaded")), qPrintable(bytesAtEnd));
        QTRY_COMPARE_WITH_TIMEOUT(window.jobsPanel()->selectedJob().value_or(Job::JobRecord{}).id, jobId, 20000);
        QCOMPARE(http->get(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs/grpo-math-") + jobId).status, 200);

        // The same folder again, Next by its Alt+N: nothing to upload.
        SubmitWizard *again = reachReview(window.openWizardAt(code));
        QVERIFY(again);
        // Save JobSpec… writes what would be submitted, its code path relative to the new file,
        // and reads back as the same JobSpec; a folder that cannot be written is said.
        const QString savedPath = m_dir.filePath(QStringLiteral("saved/grpo-math-copy.json"));
        QVERIFY(QDir().mkpath(QFileInfo(savedPath).path()));
        QString saveTo = m_dir.filePath(QStringLiteral("no-such-folder/x.json"));
        again->chooseSaveFile = [&](QWidget *, const QString &) { return saveTo; };
        auto *save = again->findChild<QPushButton *>(QStringLiteral("saveJobSpecButton"));
        QTest::mouseClick(save, Qt::LeftButton);
        QTRY_VERIFY2(labelText(again, "reviewProblems").contains(QStringLiteral("Choose another folder")), qPrintable(labelText(again, "reviewProblems")));
        saveTo = savedPath;
        QTest::mouseClick(save, Qt::LeftButton);
        QTRY_VERIFY(QFileInfo::exists(savedPath));
        const auto saved = Job::JobSpec::load(savedPath);
        QVERIFY2(saved, saved ? "" : qPrintable(saved.error().message));
        QCOMPARE(saved->name, again->spec().name);
        QCOMPARE(saved->recipe.overrides, again->spec().recipe.overrides);
        QCOMPARE(saved->pools.value(0).series, QStringLiteral("h200"));
        QCOMPARE(QDir::cleanPath(saved->codePath()), QDir::cleanPath(code));
        QVERIFY(again->jobId() != jobId);
        const QString secondId = again->jobId();
        connect(again, &SubmitWizard::submitted, this, [&] { bytesAtEnd = labelText(again, "submitBytes"); });
        // A file added after the review is not in what is sent: the Capsule the review built
        // and showed is (the same as the first job's, so nothing is uploaded).
        const QString lateFile = QDir(code).filePath(QStringLiteral("added-after-review.txt"));
        QVERIFY(Testing::writeFile(lateFile, "late"));
        QTest::keyClick(again, Qt::Key_U, Qt::AltModifier);   // S&ubmit
        QTRY_VERIFY_WITH_TIMEOUT(!window.wizard(), 60000);
        QVERIFY(QFile::remove(lateFile));
        QCOMPARE(bytesAtEnd, QStringLiteral("0 bytes: already in the bucket"));
        QTRY_COMPARE_WITH_TIMEOUT(window.jobsPanel()->selectedJob().value_or(Job::JobRecord{}).id, secondId, 20000);

        // A failed submit: a RayJob of this job's name that Starforge did not make is in the
        // way. The wizard stays open with what to do, every page as it was; Try again (Alt+T),
        // once the way is clear, submits the same job id.
        const QString rayjobs = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs");
        SubmitWizard *third = reachReview(window.openWizardAt(code));
        QVERIFY(third);
        const QString thirdId = third->jobId();
        QJsonObject foreign = Testing::starforgeRayJob(QStringLiteral("grpo-math"), thirdId, QStringLiteral("python3 -c pass"), Testing::unschedulableHead());
        QJsonObject meta = foreign.value(QStringLiteral("metadata")).toObject();
        meta.remove(QStringLiteral("labels"));
        meta.remove(QStringLiteral("annotations"));
        foreign.insert(QStringLiteral("metadata"), meta);
        QCOMPARE(http->send("POST", rayjobs, QJsonDocument(foreign).toJson()).status, 201);
        QTest::keyClick(third, Qt::Key_U, Qt::AltModifier);
        QTRY_VERIFY_WITH_TIMEOUT(labelText(third, "submitError").contains(QStringLiteral("already exists and is not this submission")), 30000);
        QVERIFY2(labelText(third, "submitError").contains(QStringLiteral("press Try again")), qPrintable(labelText(third, "submitError")));
        QCOMPARE(window.wizard(), third);
        QVERIFY(third->button(QWizard::BackButton)->isEnabled());
        QCOMPARE(third->spec().name, QStringLiteral("grpo-math"));
        QCOMPARE(third->spec().recipe.overrides.size(), 2);
        QCOMPARE(third->spec().pools.value(0).series, QStringLiteral("h200"));
        QCOMPARE(http->send("DELETE", rayjobs + QStringLiteral("/grpo-math-") + thirdId).status, 200);
        QTRY_COMPARE(http->get(rayjobs + QStringLiteral("/grpo-math-") + thirdId).status, 404);
        QTest::keyClick(third, Qt::Key_T, Qt::AltModifier);
        QTRY_VERIFY_WITH_TIMEOUT(!window.wizard(), 60000);
        QTRY_COMPARE_WITH_TIMEOUT(window.jobsPanel()->selectedJob().value_or(Job::JobRecord{}).id, thirdId, 20000);

        // Cancel while the create is on its way (a slow API server): the wizard closes once the
        // Submitter has removed what it made, and no RayJob of that id stays.
        SubmitWizard *fourth = reachReview(window.openWizardAt(code));
        QVERIFY(fourth);
        const QString fourthId = fourth->jobId();
        sandbox->api()->setFaults(Sandbox::Faults{.delayMs = 1500});
        QTest::keyClick(fourth, Qt::Key_U, Qt::AltModifier);
        auto *stages = fourth->findChild<QListWidget *>(QStringLiteral("submitStages"));
        QTRY_VERIFY_WITH_TIMEOUT(stages->currentItem() && stages->currentItem()->text().startsWith(QStringLiteral("▶  Create the RayJob")), 30000);
        QTest::mouseClick(fourth->button(QWizard::CancelButton), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!window.wizard(), 60000);
        sandbox->api()->setFaults(Sandbox::Faults{});
        QTRY_COMPARE_WITH_TIMEOUT(http->get(rayjobs + QStringLiteral("/grpo-math-") + fourthId).status, 404, 20000);
        QVERIFY(window.jobsPanel()->selectedJob().value_or(Job::JobRecord{}).id != fourthId);

        // Resubmit from an archived job: the first job, stopped (asked first) and archived, opens
        // the wizard from its JobSpec, with the code folder this machine submitted it from.
        Gui::JobsPanel *panel = window.jobsPanel();
        QTableView *view = panel->view();
        QVERIFY(panel->selectJob(jobId));
        if (!view->currentIndex().data(Models::JobsModel::ArchivedRole).toBool() && window.jobTracker()->job(jobId)) {
            prompts.answers << true;
            panel->stopSelected();
        }
        const auto archivedRow = [&] {
            const QModelIndexList found = view->model()->match(view->model()->index(0, 0), Models::JobsModel::JobIdRole, jobId, 1, Qt::MatchExactly);
            return found.isEmpty() ? QModelIndex() : found.first();
        };
        QTRY_VERIFY_WITH_TIMEOUT(archivedRow().data(Models::JobsModel::ArchivedRole).toBool(), 60000);
        const auto resubmitFromMenu = [&] {
            const QPoint at = view->visualRect(archivedRow().siblingAtColumn(Models::JobsModel::NameColumn)).center();
            QContextMenuEvent menuEvent(QContextMenuEvent::Mouse, at, view->viewport()->mapToGlobal(at));
            QApplication::sendEvent(view->viewport(), &menuEvent);
            QMenu *menu = nullptr;
            QTRY_VERIFY((menu = window.findChild<QMenu *>(QStringLiteral("jobsContextMenu"))) && menu->isVisible());
            QTest::keyClick(menu, Qt::Key_U);   // Res&ubmit…
        };
        resubmitFromMenu();
        QTRY_VERIFY(window.wizard());
        SubmitWizard *resubmit = window.wizard();
        QCOMPARE(resubmit->findChild<QLineEdit *>(QStringLiteral("jobNameEdit"))->text(), QStringLiteral("grpo-math"));
        QCOMPARE(QDir::cleanPath(resubmit->findChild<QLineEdit *>(QStringLiteral("codeFolderEdit"))->text()), QDir::cleanPath(code));
        QTRY_VERIFY(next(resubmit)->isEnabled());
        QCOMPARE(resubmit->spec().recipe.overrides.size(), 2);
        QCOMPARE(resubmit->spec().pools.value(0).series, QStringLiteral("h200"));
        QVERIFY(resubmit->jobId() != jobId);
        resubmit->reject();
        QTRY_VERIFY(!window.wizard());
        // On a machine that never submitted it (no record of its folder), the wizard asks for the
        // code folder and Next waits for it.
        QVERIFY(QFile::remove(QFileInfo(store.filePath()).dir().filePath(QStringLiteral("recent.ini"))));
        resubmitFromMenu();
        QTRY_VERIFY(window.wizard());
        resubmit = window.wizard();
        QTRY_VERIFY2(window.statusBar()->currentMessage().contains(QStringLiteral("choose its code folder")), qPrintable(window.statusBar()->currentMessage()));
        QVERIFY(resubmit->findChild<QLineEdit *>(QStringLiteral("codeFolderEdit"))->text().isEmpty());
        QTRY_VERIFY2(labelText(resubmit, "codeProblems").contains(QStringLiteral("choose the folder with your training code")),
                     qPrintable(labelText(resubmit, "codeProblems")));
        QVERIFY(!next(resubmit)->isEnabled());
        // Chosen with Browse…: the page is complete.
        resubmit->chooseFolder = [&](QWidget *, const QString &) { return code; };
        QTest::mouseClick(resubmit->findChild<QPushButton *>(QStringLiteral("codeFolderBrowse")), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(next(resubmit)->isEnabled(), 20000);
        resubmit->reject();
        QTRY_VERIFY(!window.wizard());
    }

    void menuAndDropOpenTheWizard()
    {
        // No profile, no cluster: the wizard still opens (its pages say what is missing).
        Config::ProfileStore store(m_dir.filePath(QStringLiteral("menu/p.ini")));
        Testing::MemorySecretStore secrets;
        Config::ProfileManager manager(&store, &secrets);
        Testing::ScriptedPrompts prompts;
        Gui::MainWindow window(&manager, &prompts, QProcessEnvironment());
        window.show();
        QVERIFY(QTest::qWaitForWindowActive(&window));

        // File › New Job by its shortcut: a blank job, Next off until it has a name.
        QTest::keyClick(&window, Qt::Key_N, Qt::ControlModifier);
        QTRY_VERIFY(window.wizard());
        QPointer<SubmitWizard> blank = window.wizard();
        QCOMPARE(blank->findChild<QLineEdit *>(QStringLiteral("jobNameEdit"))->text(), QString());
        QTRY_VERIFY(labelText(blank, "jobNameProblem").startsWith(QStringLiteral("name: \"\" must be")));
        QVERIFY(!next(blank)->isEnabled());
        // A second request brings the open wizard forward instead of a second one.
        QCOMPARE(window.openWizardAt(QStringLiteral(SF_SOURCE_DIR "/examples/grpo-math")), blank.data());
        QTest::mouseClick(blank->button(QWizard::CancelButton), Qt::LeftButton);
        QTRY_VERIFY(!blank && !window.wizard());

        // A folder dropped on the window: the wizard packs it (its jobspec.json prefills).
        const QString code = copyExample(m_dir.filePath(QStringLiteral("menu")));
        auto *mime = new QMimeData;
        mime->setUrls({QUrl::fromLocalFile(code)});
        const QPoint at = window.rect().center();
        QDragEnterEvent enter(at, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(at), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &drop);
        QTRY_VERIFY(window.wizard());
        QCOMPARE(window.wizard()->findChild<QLineEdit *>(QStringLiteral("codeFolderEdit"))->text(), QDir::toNativeSeparators(code));
        QCOMPARE(window.wizard()->findChild<QLineEdit *>(QStringLiteral("jobNameEdit"))->text(), QStringLiteral("grpo-math"));
        QTRY_VERIFY(next(window.wizard())->isEnabled());
        // Escape closes it as Cancel does.
        QPointer<SubmitWizard> dropped = window.wizard();
        QTest::keyClick(dropped, Qt::Key_Escape);
        QTRY_VERIFY(!dropped);
        delete mime;

        // File › Open JobSpec… that is not a JobSpec: the problem is shown, nothing opens.
        const QString bad = m_dir.filePath(QStringLiteral("menu/bad.json"));
        QVERIFY(Testing::writeFile(bad, "{\"version\": 1, \"name\": \"Bad\"}"));
        prompts.answers << bad;
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QTest::keyClick(&window, Qt::Key_O, Qt::ControlModifier);
        QTRY_COMPARE(prompts.informed.size(), 1);
        QVERIFY2(prompts.informed.first().contains(QStringLiteral("recipe: required")), qPrintable(prompts.informed.first()));
        QVERIFY(!window.wizard());
    }

    void commandLineOpensTheWizardPrefilled()
    {
        // `starforge JOBSPEC`, as the .desktop file's %f runs it: the window opens with the
        // wizard on the JobSpec (its log says which).
        const QString code = copyExample(m_dir.filePath(QStringLiteral("cli")));
        QProcess app;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("STARFORGE_CONFIG_FILE"), m_dir.filePath(QStringLiteral("cli/profiles.ini")));
        env.insert(QStringLiteral("QT_LOGGING_RULES"), QStringLiteral("starforge.gui.wizard.info=true"));
        app.setProcessEnvironment(env);
        app.setWorkingDirectory(code);
        app.start(QStringLiteral(SF_BIN_DIR "/starforge"), {QStringLiteral("jobspec.json")});
        QVERIFY(app.waitForStarted());
        QByteArray err;
        QTRY_VERIFY2_WITH_TIMEOUT((err += app.readAllStandardError()).contains("wizard opened for job grpo-math from"), err.constData(), 20000);
        QVERIFY2(err.contains(QDir(code).filePath(QStringLiteral("jobspec.json")).toUtf8()), err.constData());
        app.terminate();
        QVERIFY(app.waitForFinished(15000));
    }
};

QTEST_MAIN(TestSubmitWizard)
#include "tst_submitwizard.moc"
