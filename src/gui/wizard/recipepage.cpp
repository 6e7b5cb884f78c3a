#include "gui/wizard/recipepage.h"

#include "core/session/session.h"
#include "gui/palettefollow.h"
#include "gui/wizard/submitwizard.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTableWidget>
#include <QVBoxLayout>

namespace Starforge::Gui {

namespace {

const QColor ProblemBackground(0xfc, 0xdc, 0xdc);

QTableWidget *table(QWidget *parent, const QString &objectName, const QString &accessibleName, const QStringList &headers)
{
    auto *t = new QTableWidget(0, static_cast<int>(headers.size()), parent);
    t->setObjectName(objectName);
    t->setAccessibleName(accessibleName);
    t->setHorizontalHeaderLabels(headers);
    t->horizontalHeader()->setStretchLastSection(true);
    t->verticalHeader()->hide();
    // Typing, F2, a double-click or a click on the current cell edit; moving does not.
    t->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed | QAbstractItemView::AnyKeyPressed
                       | QAbstractItemView::SelectedClicked);
    t->setTabKeyNavigation(false);   // Tab leaves the table; arrows move, typing edits
    return t;
}

QPushButton *button(QWidget *parent, const QString &text, const QString &objectName, const QString &accessibleName)
{
    auto *b = new QPushButton(text, parent);
    b->setObjectName(objectName);
    b->setAccessibleName(accessibleName);
    return b;
}

QString cell(const QTableWidget *t, int row, int column)
{
    const QTableWidgetItem *item = t->item(row, column);
    return item ? item->text().trimmed() : QString();
}

void setCell(QTableWidget *t, int row, int column, const QString &text)
{
    t->setItem(row, column, new QTableWidgetItem(text));
}

} // namespace

RecipePage::RecipePage(SubmitWizard *wizard)
    : QWizardPage(wizard)
    , m_wizard(wizard)
    , m_entry(new QComboBox(this))
    , m_script(new QComboBox(this))
    , m_scriptLabel(new QLabel(tr("&Script:"), this))
    , m_config(new QComboBox(this))
    , m_overrides(new QListWidget(this))
    , m_addOverride(button(this, tr("A&dd override"), QStringLiteral("addOverrideButton"), tr("Add an override")))
    , m_removeOverride(button(this, tr("Remove override"), QStringLiteral("removeOverrideButton"), tr("Remove the selected override")))
    , m_image(new QLineEdit(this))
    , m_imageNote(new QLabel(this))
    , m_env(table(this, QStringLiteral("envTable"), tr("Environment variables"), {tr("Name"), tr("Value")}))
    , m_addEnv(button(this, tr("Add &variable"), QStringLiteral("addEnvButton"), tr("Add an environment variable")))
    , m_removeEnv(button(this, tr("Remove variable"), QStringLiteral("removeEnvButton"), tr("Remove the selected environment variable")))
    , m_secretEnv(table(this, QStringLiteral("secretEnvTable"), tr("Environment variables from Kubernetes Secrets"),
                        {tr("Name"), tr("Secret"), tr("Key")}))
    , m_addSecret(button(this, tr("Add secret variab&le"), QStringLiteral("addSecretEnvButton"), tr("Add a variable from a Secret")))
    , m_removeSecret(button(this, tr("Remove secret variable"), QStringLiteral("removeSecretEnvButton"), tr("Remove the selected secret variable")))
    , m_problems(new QLabel(this))
{
    setTitle(tr("Recipe"));
    setSubTitle(tr("What NeMo-RL runs: the entry point, its config and overrides, the image and the environment."));
    m_entry->setObjectName(QStringLiteral("recipeEntryCombo"));
    m_entry->setAccessibleName(tr("Algorithm or script"));
    for (const QString &algorithm : Job::JobSpec::algorithms()) m_entry->addItem(tr("%1 (examples/run_%1.py)").arg(algorithm), algorithm);
    m_entry->addItem(tr("A script from the code folder"), QString());
    m_script->setObjectName(QStringLiteral("scriptCombo"));
    m_script->setAccessibleName(tr("Script"));
    m_script->setEditable(true);
    m_scriptLabel->setBuddy(m_script);
    m_config->setObjectName(QStringLiteral("configCombo"));
    m_config->setAccessibleName(tr("Config file"));
    m_config->setEditable(true);
    m_overrides->setObjectName(QStringLiteral("overridesList"));
    m_overrides->setAccessibleName(tr("Overrides"));
    m_overrides->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed | QAbstractItemView::AnyKeyPressed
                                 | QAbstractItemView::SelectedClicked);
    m_image->setObjectName(QStringLiteral("imageEdit"));
    m_image->setAccessibleName(tr("Image"));
    m_imageNote->setObjectName(QStringLiteral("imageNote"));
    m_problems->setObjectName(QStringLiteral("recipeProblems"));
    m_problems->setWordWrap(true);
    m_problems->setTextInteractionFlags(Qt::TextSelectableByMouse);
    followTone(m_problems, Tones::Tone::Error);

    auto *form = new QFormLayout;
    auto *entryLabel = new QLabel(tr("&Algorithm:"), this);
    entryLabel->setBuddy(m_entry);
    form->addRow(entryLabel, m_entry);
    form->addRow(m_scriptLabel, m_script);
    auto *configLabel = new QLabel(tr("&Config:"), this);
    configLabel->setBuddy(m_config);
    form->addRow(configLabel, m_config);
    auto *imageLabel = new QLabel(tr("&Image:"), this);
    imageLabel->setBuddy(m_image);
    form->addRow(imageLabel, m_image);
    form->addRow(QString(), m_imageNote);

    auto *grid = new QGridLayout;
    const auto addList = [&](int column, const QString &label, QWidget *view, QPushButton *add, QPushButton *remove) {
        auto *title = new QLabel(label, this);
        title->setBuddy(view);
        grid->addWidget(title, 0, column);
        grid->addWidget(view, 1, column);
        auto *buttons = new QHBoxLayout;
        buttons->addWidget(add);
        buttons->addWidget(remove);
        buttons->addStretch(1);
        grid->addLayout(buttons, 2, column);
    };
    addList(0, tr("&Overrides (Hydra: key=value, +key=value, ~key):"), m_overrides, m_addOverride, m_removeOverride);
    addList(1, tr("&Environment (not RAY_ or FORGE_ names):"), m_env, m_addEnv, m_removeEnv);
    addList(2, tr("Secre&t environment (from a Kubernetes Secret):"), m_secretEnv, m_addSecret, m_removeSecret);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addLayout(grid, 1);
    layout->addWidget(m_problems);

    connect(m_entry, &QComboBox::currentIndexChanged, this, &RecipePage::refresh);
    connect(m_script, &QComboBox::currentTextChanged, this, &RecipePage::refresh);
    connect(m_config, &QComboBox::currentTextChanged, this, &RecipePage::refresh);
    connect(m_image, &QLineEdit::textChanged, this, &RecipePage::refresh);
    connect(m_overrides, &QListWidget::itemChanged, this, &RecipePage::refresh);
    connect(m_env, &QTableWidget::itemChanged, this, &RecipePage::refresh);
    connect(m_secretEnv, &QTableWidget::itemChanged, this, &RecipePage::refresh);
    connect(m_addOverride, &QPushButton::clicked, this, [this] {
        auto *item = new QListWidgetItem(m_overrides);
        item->setFlags(item->flags() | Qt::ItemIsEditable);
        m_overrides->setCurrentItem(item);
        m_overrides->setFocus();
        m_overrides->editItem(item);
    });
    connect(m_removeOverride, &QPushButton::clicked, this, [this] {
        delete m_overrides->currentItem();
        refresh();
    });
    const auto addRow = [this](QTableWidget *t) {
        const int row = t->rowCount();
        t->insertRow(row);
        for (int c = 0; c < t->columnCount(); ++c) setCell(t, row, c, QString());
        t->setCurrentCell(row, 0);
        t->setFocus();
        t->editItem(t->item(row, 0));
    };
    const auto removeRow = [this](QTableWidget *t) {
        if (t->currentRow() >= 0) t->removeRow(t->currentRow());
        refresh();
    };
    connect(m_addEnv, &QPushButton::clicked, this, [this, addRow] { addRow(m_env); });
    connect(m_removeEnv, &QPushButton::clicked, this, [this, removeRow] { removeRow(m_env); });
    connect(m_addSecret, &QPushButton::clicked, this, [this, addRow] { addRow(m_secretEnv); });
    connect(m_removeSecret, &QPushButton::clicked, this, [this, removeRow] { removeRow(m_secretEnv); });
    connect(m_wizard, &SubmitWizard::specChanged, this, [this] {
        if (isVisible()) fillFileChoices();
    });
}

void RecipePage::load(const Job::JobSpec &spec)
{
    m_loading = true;
    const int entry = spec.recipe.algorithm.isEmpty() ? m_entry->count() - 1 : m_entry->findData(spec.recipe.algorithm);
    m_entry->setCurrentIndex(entry < 0 ? 0 : entry);
    m_script->setCurrentText(spec.recipe.script);
    m_config->setCurrentText(spec.recipe.config);
    m_overrides->clear();
    for (const QString &o : spec.recipe.overrides) {
        auto *item = new QListWidgetItem(o, m_overrides);
        item->setFlags(item->flags() | Qt::ItemIsEditable);
    }
    m_image->setText(spec.image);
    m_env->setRowCount(0);
    for (auto it = spec.env.cbegin(); it != spec.env.cend(); ++it) {
        const int row = m_env->rowCount();
        m_env->insertRow(row);
        setCell(m_env, row, 0, it.key());
        setCell(m_env, row, 1, it.value());
    }
    m_secretEnv->setRowCount(0);
    for (auto it = spec.secretEnv.cbegin(); it != spec.secretEnv.cend(); ++it) {
        const int row = m_secretEnv->rowCount();
        m_secretEnv->insertRow(row);
        setCell(m_secretEnv, row, 0, it.key());
        setCell(m_secretEnv, row, 1, it->secret);
        setCell(m_secretEnv, row, 2, it->key);
    }
    m_loading = false;
}

void RecipePage::apply(Job::JobSpec &spec) const
{
    spec.recipe.algorithm = m_entry->currentData().toString();
    spec.recipe.script = spec.recipe.algorithm.isEmpty() ? m_script->currentText().trimmed() : QString();
    spec.recipe.config = m_config->currentText().trimmed();
    spec.recipe.overrides.clear();
    for (int i = 0; i < m_overrides->count(); ++i) {
        const QString text = m_overrides->item(i)->text().trimmed();
        if (!text.isEmpty()) spec.recipe.overrides << text;
    }
    spec.image = m_image->text().trimmed();
    spec.env.clear();
    for (int row = 0; row < m_env->rowCount(); ++row) {
        if (!cell(m_env, row, 0).isEmpty()) spec.env.insert(cell(m_env, row, 0), m_env->item(row, 1) ? m_env->item(row, 1)->text() : QString());
    }
    spec.secretEnv.clear();
    for (int row = 0; row < m_secretEnv->rowCount(); ++row) {
        if (!cell(m_secretEnv, row, 0).isEmpty()) {
            spec.secretEnv.insert(cell(m_secretEnv, row, 0), Job::SecretRef{cell(m_secretEnv, row, 1), cell(m_secretEnv, row, 2)});
        }
    }
}

void RecipePage::initializePage()
{
    fillFileChoices();
    const Session *session = m_wizard->session();
    const QString profileImage = session ? session->settings().image : Job::ClusterSettings().image;
    m_image->setPlaceholderText(profileImage);
    m_imageNote->setText(tr("Empty: the profile's image (FORGE_IMAGE_NEMO_RL), %1.").arg(profileImage));
    refresh();
}

void RecipePage::fillFileChoices()
{
    // The folder's packed files: the config and scripts ship in the Capsule.
    QStringList configs;
    QStringList scripts;
    if (const auto &listing = m_wizard->listing()) {
        for (const Job::CapsuleTreeEntry &e : listing->entries) {
            if (e.isDir || !e.excludedBy.isEmpty()) continue;
            if (e.path.endsWith(QLatin1String(".yaml")) || e.path.endsWith(QLatin1String(".yml"))) configs << e.path;
            if (e.path.endsWith(QLatin1String(".py"))) scripts << e.path;
        }
    }
    const auto fill = [](QComboBox *combo, const QStringList &items) {
        const QSignalBlocker blocker(combo);
        const QString current = combo->currentText();
        combo->clear();
        combo->addItems(items);
        combo->setCurrentText(current);
    };
    fill(m_config, configs);
    fill(m_script, scripts);
    refresh();
}

void RecipePage::markRows()
{
    const QStringList problems = m_wizard->problemsOf({QStringLiteral("recipe"), QStringLiteral("env"), QStringLiteral("secretEnv")});
    const auto problemFor = [&](const QString &prefix) {
        QStringList found;
        for (const QString &p : problems) {
            if (p.startsWith(prefix)) found << p;
        }
        return found.join(u'\n');
    };
    for (int i = 0; i < m_overrides->count(); ++i) {
        QListWidgetItem *item = m_overrides->item(i);
        const QString problem = problemFor(QStringLiteral("recipe.overrides[%1]").arg(i));
        item->setBackground(problem.isEmpty() ? QBrush() : QBrush(ProblemBackground));
        item->setToolTip(problem);
    }
    for (QTableWidget *t : {m_env, m_secretEnv}) {
        const QString field = t == m_env ? QStringLiteral("env.") : QStringLiteral("secretEnv.");
        for (int row = 0; row < t->rowCount(); ++row) {
            const QString name = cell(t, row, 0);
            const QString problem = name.isEmpty() ? QString() : problemFor(field + name + (t == m_env ? QStringLiteral(":") : QString()));
            for (int c = 0; c < t->columnCount(); ++c) {
                if (QTableWidgetItem *item = t->item(row, c)) {
                    item->setBackground(problem.isEmpty() ? QBrush() : QBrush(ProblemBackground));
                    item->setToolTip(problem);
                }
            }
        }
    }
}

void RecipePage::refresh()
{
    if (m_loading) return;
    const bool script = m_entry->currentData().toString().isEmpty();
    m_script->setVisible(script);
    m_scriptLabel->setVisible(script);
    {
        // Marking rows changes items; that is not an edit.
        const QSignalBlocker a(m_overrides);
        const QSignalBlocker b(m_env);
        const QSignalBlocker c(m_secretEnv);
        markRows();
    }
    QStringList problems = m_wizard->problemsOf({QStringLiteral("recipe"), QStringLiteral("env"), QStringLiteral("secretEnv"), QStringLiteral("image")});
    const Job::JobSpec spec = m_wizard->spec();
    if (!spec.recipe.config.isEmpty() && problems.isEmpty() && m_wizard->listing()) {
        bool found = false;
        for (const Job::CapsuleTreeEntry &e : m_wizard->listing()->entries) found = found || (e.path == spec.recipe.config && e.excludedBy.isEmpty() && !e.isDir);
        if (!found) problems << tr("recipe.config: %1 is not a packed file of the code folder; pick one from the list.").arg(spec.recipe.config);
    }
    m_problems->setText(problems.join(u'\n'));
    m_problems->setVisible(!problems.isEmpty());
    m_complete = problems.isEmpty();
    Q_EMIT completeChanged();
}

bool RecipePage::isComplete() const
{
    return m_complete;
}

} // namespace Starforge::Gui
