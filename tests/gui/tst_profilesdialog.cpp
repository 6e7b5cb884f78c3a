// The profiles dialog driven as a user would: clicks and typing on the real widgets (offscreen),
// questions answered by ScriptedPrompts, the keychain an in-memory SecretStore that can fail.

#include "core/config/profilemanager.h"
#include "gui/profilesdialog.h"
#include "models/profilesettingsmodel.h"
#include "scriptedprompts.h"
#include "support/memorysecretstore.h"
#include "support/testutil.h"

#include <QAbstractItemView>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPushButton>
#include <QTreeView>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using Models::ProfileSettingsModel;
using Testing::MemorySecretStore;
using Testing::ScriptedPrompts;

class TestProfilesDialog : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Config::ProfileStore> m_store;
    std::unique_ptr<MemorySecretStore> m_secrets;
    std::unique_ptr<Config::ProfileManager> m_manager;
    ScriptedPrompts m_prompts;
    std::unique_ptr<Gui::ProfilesDialog> m_dialog;

    template <typename T>
    T *child(const char *name) const
    {
        T *w = m_dialog->findChild<T *>(QString::fromLatin1(name));
        if (!w) {
            qWarning("no widget %s", name);
        }
        return w;
    }
    QPushButton *button(const char *name) const { return child<QPushButton>(name); }
    QString status() const { return child<QLabel>("statusLabel")->text(); }
    void click(const char *name)
    {
        QPushButton *b = button(name);
        QVERIFY2(b && b->isEnabled(), name);
        QTest::mouseClick(b, Qt::LeftButton);
    }
    bool waitIdle() { return QTest::qWaitFor([this] { return !m_dialog->isBusy(); }, 10000); }

    // Double-clicks a value cell, types into its editor and commits with Enter.
    void editValue(const QString &key, const QString &text)
    {
        auto *view = child<QTreeView>("settingsView");
        const QModelIndex index = m_dialog->settingIndex(key, ProfileSettingsModel::ValueColumn);
        QVERIFY2(index.isValid(), qPrintable(key));
        view->scrollTo(index);
        // A click selects the cell, a double-click opens its editor, as a person edits.
        const QPoint cell = view->visualRect(index).center();
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, cell);
        QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, cell);
        QTRY_VERIFY2(view->indexWidget(index), qPrintable(key));
        auto *editor = qobject_cast<QLineEdit *>(view->indexWidget(index));
        QVERIFY2(editor, qPrintable(key));
        editor->selectAll();
        QTest::keyClicks(editor, text);
        QTest::keyClick(editor, Qt::Key_Return);
        // The delegate commits on Return through a queued call; wait until the editor is closed.
        QTRY_VERIFY2(!view->indexWidget(index), qPrintable(key));
    }

    void openDialog()
    {
        m_dialog = std::make_unique<Gui::ProfilesDialog>(m_manager.get(), &m_prompts, QProcessEnvironment());
        m_dialog->resize(1000, 640);
        m_dialog->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_dialog.get()));
    }

private Q_SLOTS:
    void init()
    {
        static int n = 0;
        m_store = std::make_unique<Config::ProfileStore>(m_dir.filePath(QStringLiteral("d%1.ini").arg(++n)));
        m_secrets = std::make_unique<MemorySecretStore>();
        m_manager = std::make_unique<Config::ProfileManager>(m_store.get(), m_secrets.get());
        m_prompts.answers.clear();
        m_prompts.asked.clear();
        m_prompts.informed.clear();
    }
    void cleanup() { m_dialog.reset(); }

    void everyInteractiveWidgetHasAName()
    {
        openDialog();
        for (const char *name : {"profileList", "addButton", "importButton", "duplicateButton", "renameButton", "activateButton",
                                 "deleteButton", "settingsView", "resetButton", "revertButton", "applyButton"}) {
            QVERIFY2(m_dialog->findChild<QWidget *>(QString::fromLatin1(name)), name);
        }
        // Nothing to act on yet.
        QVERIFY(!button("deleteButton")->isEnabled());
        QVERIFY(!button("applyButton")->isEnabled());
        QVERIFY(child<QLabel>("helpLabel")->text().contains(QStringLiteral("No profiles yet")));
    }

    void settingsAreGroupedAndNamedForPeople()
    {
        QVERIFY(m_store->addProfile(QStringLiteral("lab")).ok());
        openDialog();
        auto *view = child<QTreeView>("settingsView");
        QAbstractItemModel *grouped = view->model();
        QStringList headings;
        for (int row = 0; row < grouped->rowCount(); ++row) {
            headings << grouped->index(row, 0).data().toString();
            QVERIFY2(view->isExpanded(grouped->index(row, 0)), qPrintable(headings.last()));
            QVERIFY(view->isFirstColumnSpanned(row, QModelIndex()));
        }
        QCOMPARE(headings, (QStringList{QStringLiteral("Cluster"), QStringLiteral("Sign-in"), QStringLiteral("Network"), QStringLiteral("GPUs and pods"),
                                        QStringLiteral("Images"), QStringLiteral("Storage"), QStringLiteral("Object storage (S3)"), QStringLiteral("KubeRay")}));

        // A setting reads as its label; its variable is under it, in the tooltip and told to a screen reader.
        const QModelIndex server = m_dialog->settingIndex(QStringLiteral("FORGE_K8S_API_SERVER"), ProfileSettingsModel::KeyColumn);
        QCOMPARE(server.data().toString(), QStringLiteral("API server"));
        QCOMPARE(server.parent().data().toString(), QStringLiteral("Cluster"));
        QVERIFY(server.data(Qt::ToolTipRole).toString().contains(QStringLiteral("FORGE_K8S_API_SERVER")));
        QVERIFY(server.data(Qt::AccessibleDescriptionRole).toString().startsWith(QStringLiteral("FORGE_K8S_API_SERVER")));
        // Two lines tall: the label and the variable.
        QVERIFY(view->visualRect(server).height() >= 2 * view->fontMetrics().height());

        // The keyboard walks from a heading into its settings; the help line follows.
        view->setFocus();
        view->setCurrentIndex(grouped->index(0, 0));
        auto *help = child<QLabel>("helpLabel");
        QVERIFY2(help->text().contains(QStringLiteral("Which Kubernetes cluster")), qPrintable(help->text()));
        QVERIFY(!button("resetButton")->isEnabled()); // a heading has nothing to reset
        QTest::keyClick(view, Qt::Key_Down);
        QCOMPARE(view->currentIndex().siblingAtColumn(0), server);
        QVERIFY2(help->text().contains(QStringLiteral("FORGE_K8S_API_SERVER")) && help->text().contains(QStringLiteral("API server")), qPrintable(help->text()));
        QVERIFY(button("resetButton")->isEnabled());
        // Left on a setting goes to its heading, Left again folds the group.
        QTest::keyClick(view, Qt::Key_Left);
        QCOMPARE(view->currentIndex().siblingAtColumn(0), grouped->index(0, 0));
        QTest::keyClick(view, Qt::Key_Left);
        QVERIFY(!view->isExpanded(grouped->index(0, 0)));
    }

    void addEditApplyWithInlineValidation()
    {
        openDialog();
        // A bad name is explained and asked again; then a good one.
        m_prompts.answers = {QStringLiteral("bad/name"), QStringLiteral("lab")};
        click("addButton");
        QVERIFY(waitIdle());
        QCOMPARE(m_prompts.informed.size(), 1);
        QVERIFY(m_prompts.informed.first().contains(QStringLiteral("not a profile name")));
        QVERIFY(m_store->contains(QStringLiteral("lab")));
        QCOMPARE(m_dialog->currentProfile(), QStringLiteral("lab"));
        QVERIFY(status().contains(QStringLiteral("Created profile lab")));

        // An invalid value shows its error at once and keeps Apply off.
        editValue(QStringLiteral("FORGE_K8S_SHM_SIZE"), QStringLiteral("64GB"));
        auto *problems = child<QLabel>("problemLabel");
        QTRY_VERIFY(problems->isVisible());
        QVERIFY2(problems->text().contains(QStringLiteral("64Gi")), qPrintable(problems->text()));
        QVERIFY(!button("applyButton")->isEnabled());

        editValue(QStringLiteral("FORGE_K8S_SHM_SIZE"), QStringLiteral("32Gi"));
        QTRY_VERIFY(!problems->isVisible());
        editValue(QStringLiteral("FORGE_K8S_API_SERVER"), QStringLiteral("https://k8s.lab:6443/"));
        editValue(QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("typed-token-5566778899"));
        QVERIFY(button("applyButton")->isEnabled());
        // The typed secret is not on screen.
        auto *model = m_dialog->settingsModel();
        const QModelIndex token = model->index(model->rowOf(QStringLiteral("FORGE_K8S_TOKEN")), ProfileSettingsModel::ValueColumn);
        QVERIFY(!token.data().toString().contains(QStringLiteral("typed-token")));

        click("applyButton");
        QVERIFY(waitIdle());
        QVERIFY2(status().contains(QStringLiteral("Saved 3 change(s)")), qPrintable(status()));
        const auto lab = m_store->profile(QStringLiteral("lab"));
        QCOMPARE(lab->values.value(QStringLiteral("FORGE_K8S_SHM_SIZE")), QStringLiteral("32Gi"));
        QCOMPARE(lab->values.value(QStringLiteral("FORGE_K8S_API_SERVER")), QStringLiteral("https://k8s.lab:6443"));
        QCOMPARE(m_secrets->entries.value(QStringLiteral("lab/FORGE_K8S_TOKEN")), QStringLiteral("typed-token-5566778899"));
        QVERIFY(!Testing::readAll(m_store->filePath()).contains("typed-token"));
        QTRY_COMPARE(token.data().toString(), QStringLiteral("set in the keychain"));
        QVERIFY(!button("applyButton")->isEnabled());

        // Clearing the secret: select its row (a click), Reset, Apply.
        auto *settingsView = child<QTreeView>("settingsView");
        const QModelIndex tokenInView = m_dialog->settingIndex(QStringLiteral("FORGE_K8S_TOKEN"), ProfileSettingsModel::ValueColumn);
        settingsView->scrollTo(tokenInView);
        QTest::mouseClick(settingsView->viewport(), Qt::LeftButton, {}, settingsView->visualRect(tokenInView).center());
        QCOMPARE(settingsView->currentIndex(), tokenInView);
        click("resetButton");
        click("applyButton");
        QVERIFY(waitIdle());
        QVERIFY(!m_secrets->entries.contains(QStringLiteral("lab/FORGE_K8S_TOKEN")));
        QTRY_COMPARE(token.data().toString(), QStringLiteral("not set"));
    }

    void booleanEditorOffersTheChoices()
    {
        QVERIFY(m_store->addProfile(QStringLiteral("lab")).ok());
        openDialog();
        auto *view = child<QTreeView>("settingsView");
        const QModelIndex index = m_dialog->settingIndex(QStringLiteral("FORGE_K8S_INSECURE_SKIP_TLS_VERIFY"), ProfileSettingsModel::ValueColumn);
        auto *model = m_dialog->settingsModel();
        // Selected with a click, its editor opened from the keyboard (F2).
        view->scrollTo(index);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(index).center());
        QTest::keyClick(view, Qt::Key_F2);
        QTRY_VERIFY(view->indexWidget(index));
        auto *combo = qobject_cast<QComboBox *>(view->indexWidget(index));
        QVERIFY(combo);
        QCOMPARE(combo->count(), 2);
        QCOMPARE(combo->currentData().toString(), QStringLiteral("false")); // starts at the default
        QTest::keyClick(combo, Qt::Key_Up); // choosing commits at once
        QCOMPARE(model->pendingChanges().value(QStringLiteral("FORGE_K8S_INSECURE_SKIP_TLS_VERIFY")), QStringLiteral("true"));
    }

    void keychainFailureKeepsTheEdits()
    {
        QVERIFY(m_store->addProfile(QStringLiteral("lab")).ok());
        openDialog();
        editValue(QStringLiteral("FORGE_S3_SECRET_KEY"), QStringLiteral("s3-secret-typed-999"));
        editValue(QStringLiteral("FORGE_S3_BUCKET"), QStringLiteral("new-bucket"));
        m_secrets->failing = true;
        click("applyButton");
        QVERIFY(waitIdle());
        QVERIFY2(status().contains(QStringLiteral("Nothing was changed")), qPrintable(status()));
        QVERIFY(!m_store->profile(QStringLiteral("lab"))->values.contains(QStringLiteral("FORGE_S3_BUCKET")));
        // Still pending: fixing the keychain and applying again works.
        QVERIFY(m_dialog->settingsModel()->hasPendingChanges());
        m_secrets->failing = false;
        click("applyButton");
        QVERIFY(waitIdle());
        QCOMPARE(m_store->profile(QStringLiteral("lab"))->values.value(QStringLiteral("FORGE_S3_BUCKET")), QStringLiteral("new-bucket"));
        QCOMPARE(m_secrets->entries.value(QStringLiteral("lab/FORGE_S3_SECRET_KEY")), QStringLiteral("s3-secret-typed-999"));
    }

    void importKubeconfigWithContextChoice()
    {
        openDialog();
        m_prompts.answers = {Testing::dataPath(QStringLiteral("kubeconfig/ca-file.yaml")), QStringLiteral("other@c1"), QStringLiteral("imported")};
        click("importButton");
        QVERIFY(waitIdle());
        // The current context is offered first.
        QVERIFY2(m_prompts.asked.value(1).contains(QStringLiteral("[file-ctx,other@c1]")), qPrintable(m_prompts.asked.join(u'\n')));
        QVERIFY2(m_prompts.asked.value(2).contains(QStringLiteral("[other-c1]")), qPrintable(m_prompts.asked.join(u'\n')));
        QVERIFY2(status().contains(QStringLiteral("Imported context other@c1 into profile imported")), qPrintable(status()));
        QCOMPARE(m_dialog->currentProfile(), QStringLiteral("imported"));
        const auto p = m_store->profile(QStringLiteral("imported"));
        QCOMPARE(p->values.value(QStringLiteral("FORGE_K8S_NAMESPACE")), QStringLiteral("other"));
        QCOMPARE(p->values.value(QStringLiteral("FORGE_K8S_TOKEN_FILE")), Testing::dataPath(QStringLiteral("kubeconfig/token.txt")));
        QCOMPARE(m_store->activeProfile(), QStringLiteral("imported"));

        // Re-import into the same profile asks before replacing its connection settings.
        m_prompts.answers = {Testing::dataPath(QStringLiteral("kubeconfig/ca-data.yaml")), QStringLiteral("imported"), true};
        click("importButton");
        QVERIFY(waitIdle());
        QVERIFY(m_prompts.asked.last().startsWith(QStringLiteral("confirm:")));
        QCOMPARE(m_store->profile(QStringLiteral("imported"))->values.value(QStringLiteral("FORGE_K8S_API_SERVER")), QStringLiteral("https://api.lab.example:6443"));
        QVERIFY(!m_store->profile(QStringLiteral("imported"))->values.contains(QStringLiteral("FORGE_K8S_TOKEN_FILE")));
        QCOMPARE(m_secrets->entries.value(QStringLiteral("imported/FORGE_K8S_TOKEN")), QStringLiteral("sf-test-token-0123456789abcdef"));
    }

    void importOfAnUnsupportedContextExplains()
    {
        openDialog();
        m_prompts.answers = {Testing::dataPath(QStringLiteral("kubeconfig/unsupported.yaml")), QStringLiteral("basic")};
        click("importButton");
        QVERIFY(waitIdle());
        QVERIFY2(status().contains(QStringLiteral("basic authentication")), qPrintable(status()));
        QVERIFY(m_store->profileNames().isEmpty());
        m_prompts.answers = {Testing::dataPath(QStringLiteral("kubeconfig/malformed.yaml"))};
        click("importButton");
        QVERIFY(status().contains(QStringLiteral("not valid YAML")));
    }

    void duplicateRenameActivateDelete()
    {
        QVERIFY(m_store->addProfile(QStringLiteral("a")).ok());
        QVERIFY(m_store->addProfile(QStringLiteral("z")).ok());
        m_secrets->entries.insert(QStringLiteral("a/FORGE_K8S_TOKEN"), QStringLiteral("token-a-123456"));
        openDialog();
        QCOMPARE(m_dialog->currentProfile(), QStringLiteral("a"));

        m_prompts.answers = {QStringLiteral("b")};
        click("duplicateButton");
        QVERIFY(waitIdle());
        QVERIFY(m_prompts.asked.last().contains(QStringLiteral("[a-copy]")));
        QCOMPARE(m_dialog->currentProfile(), QStringLiteral("b"));
        QCOMPARE(m_secrets->entries.value(QStringLiteral("b/FORGE_K8S_TOKEN")), QStringLiteral("token-a-123456"));

        // An existing name is refused and asked again.
        m_prompts.answers = {QStringLiteral("z"), QStringLiteral("c")};
        click("renameButton");
        QVERIFY(waitIdle());
        QVERIFY(m_prompts.informed.last().contains(QStringLiteral("already exists")));
        QCOMPARE(m_dialog->currentProfile(), QStringLiteral("c"));
        QVERIFY(!m_store->contains(QStringLiteral("b")));
        QCOMPARE(m_secrets->entries.value(QStringLiteral("c/FORGE_K8S_TOKEN")), QStringLiteral("token-a-123456"));
        auto *list = child<QListView>("profileList");
        QCOMPARE(list->currentIndex().data(Qt::EditRole).toString(), QStringLiteral("c"));

        click("activateButton");
        QCOMPARE(m_store->activeProfile(), QStringLiteral("c"));
        QVERIFY(!button("activateButton")->isEnabled());

        // Delete asks first; cancelling keeps the profile.
        m_prompts.answers = {false};
        click("deleteButton");
        QVERIFY(m_store->contains(QStringLiteral("c")));
        // The keychain fails: the dialog offers to delete anyway, leaving the secrets, and says so.
        m_secrets->failing = true;
        m_prompts.answers = {true, true};
        click("deleteButton");
        QTRY_VERIFY(!m_store->contains(QStringLiteral("c")));
        QVERIFY(waitIdle());
        QVERIFY2(status().contains(QStringLiteral("secret-tool")), qPrintable(status()));
        m_secrets->failing = false;
        QCOMPARE(m_dialog->currentProfile(), QString());
        QVERIFY(!button("deleteButton")->isEnabled());
    }

    void switchingProfilesAsksAboutUnappliedEdits()
    {
        QVERIFY(m_store->addProfile(QStringLiteral("a")).ok());
        QVERIFY(m_store->addProfile(QStringLiteral("b")).ok());
        openDialog();
        editValue(QStringLiteral("FORGE_S3_BUCKET"), QStringLiteral("pending-bucket"));
        auto *list = child<QListView>("profileList");
        QVERIFY(m_dialog->settingsModel()->hasPendingChanges());
        // Profile b chosen with the arrow keys, as a keyboard user moves in the list.
        m_prompts.answers = {false};
        list->setFocus();
        QTest::keyClick(list, Qt::Key_Down);
        QVERIFY2(m_prompts.asked.size() == 1, qPrintable(m_prompts.asked.join(u'\n')));
        QCOMPARE(m_dialog->currentProfile(), QStringLiteral("a"));
        QVERIFY(m_dialog->settingsModel()->hasPendingChanges());
        m_prompts.answers = {true};
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualRect(list->model()->index(1, 0)).center());
        QCOMPARE(m_dialog->currentProfile(), QStringLiteral("b"));
        QVERIFY(!m_dialog->settingsModel()->hasPendingChanges());
        QVERIFY(!m_store->profile(QStringLiteral("a"))->values.contains(QStringLiteral("FORGE_S3_BUCKET")));
    }

    void keychainReadFailureIsShown()
    {
        QVERIFY(m_store->addProfile(QStringLiteral("a")).ok());
        m_secrets->failing = true;
        openDialog();
        QTRY_VERIFY(status().contains(QStringLiteral("keychain could not be read")));
        auto *model = m_dialog->settingsModel();
        QCOMPARE(model->index(model->rowOf(QStringLiteral("FORGE_K8S_TOKEN")), ProfileSettingsModel::ValueColumn).data().toString(),
                 QStringLiteral("(keychain unavailable)"));
    }
};

QTEST_MAIN(TestProfilesDialog)
#include "tst_profilesdialog.moc"
