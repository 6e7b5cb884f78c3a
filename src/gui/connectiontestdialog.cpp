#include "gui/connectiontestdialog.h"

#include "core/session/connectiontest.h"

#include <QApplication>
#include <QClipboard>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QStyle>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace Starforge::Gui {

using Outcome = ConnectionCheck::Outcome;

namespace {
enum Column { TitleColumn, ResultColumn, TimeColumn, DetailColumn };

QString outcomeText(Outcome outcome)
{
    switch (outcome) {
    case Outcome::Running: return ConnectionTestDialog::tr("checking…");
    case Outcome::Passed: return ConnectionTestDialog::tr("OK");
    case Outcome::Warning: return ConnectionTestDialog::tr("Warning");
    case Outcome::Failed: return ConnectionTestDialog::tr("Failed");
    case Outcome::Skipped: return ConnectionTestDialog::tr("Not tried");
    }
    return {};
}

QIcon outcomeIcon(Outcome outcome, const QStyle *style)
{
    switch (outcome) {
    case Outcome::Running: return style->standardIcon(QStyle::SP_BrowserReload);
    case Outcome::Passed: return style->standardIcon(QStyle::SP_DialogApplyButton);
    case Outcome::Warning: return style->standardIcon(QStyle::SP_MessageBoxWarning);
    case Outcome::Failed: return style->standardIcon(QStyle::SP_MessageBoxCritical);
    case Outcome::Skipped: return style->standardIcon(QStyle::SP_DialogCancelButton);
    }
    return {};
}
} // namespace

ConnectionTestDialog::ConnectionTestDialog(Secrets::SecretStore *secrets, QProcessEnvironment environment, QWidget *parent)
    : QDialog(parent)
    , m_test(new ConnectionTest(secrets, std::move(environment), this))
    , m_list(new QTreeWidget(this))
    , m_heading(new QLabel(this))
    , m_detail(new QLabel(this))
    , m_summary(new QLabel(this))
    , m_again(new QPushButton(tr("&Run again"), this))
    , m_copy(new QPushButton(tr("&Copy report"), this))
{
    setObjectName(QStringLiteral("connectionTestDialog"));
    setWindowTitle(tr("Test Connection"));
    resize(900, 520);
    m_list->setObjectName(QStringLiteral("checksList"));
    m_list->setAccessibleName(tr("Connection checks"));
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->setAlternatingRowColors(true);
    m_list->setHeaderLabels({tr("Check"), tr("Result"), tr("Time"), tr("Detail")});
    m_list->header()->setSectionResizeMode(TitleColumn, QHeaderView::ResizeToContents);
    m_list->header()->setSectionResizeMode(ResultColumn, QHeaderView::ResizeToContents);
    m_list->header()->setSectionResizeMode(TimeColumn, QHeaderView::ResizeToContents);
    m_list->header()->setStretchLastSection(true);
    m_heading->setObjectName(QStringLiteral("testHeading"));
    m_heading->setWordWrap(true);
    m_detail->setObjectName(QStringLiteral("checkDetail"));
    m_detail->setWordWrap(true);
    m_detail->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_detail->setTextFormat(Qt::PlainText);
    m_detail->setMinimumHeight(90);
    m_detail->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_detail->setAccessibleName(tr("Selected check's detail"));
    m_summary->setObjectName(QStringLiteral("testSummary"));
    m_again->setObjectName(QStringLiteral("runAgainButton"));
    m_copy->setObjectName(QStringLiteral("copyReportButton"));

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    buttons->addButton(m_again, QDialogButtonBox::ActionRole);
    buttons->addButton(m_copy, QDialogButtonBox::ActionRole);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_heading);
    layout->addWidget(m_list, 1);
    layout->addWidget(m_detail);
    layout->addWidget(m_summary);
    layout->addWidget(buttons);

    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_again, &QPushButton::clicked, this, [this] {
        if (m_rerun) m_rerun();
    });
    connect(m_copy, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setText(report()); });
    connect(m_test, &ConnectionTest::checkChanged, this, &ConnectionTestDialog::showCheck);
    connect(m_test, &ConnectionTest::finished, this, &ConnectionTestDialog::onFinished);
    connect(m_list, &QTreeWidget::currentItemChanged, this, &ConnectionTestDialog::showSelected);
}

ConnectionTestDialog::~ConnectionTestDialog()
{
    m_test->cancel();
}

void ConnectionTestDialog::start(const SessionSource &source, const QString &name)
{
    m_name = name;
    m_rerun = [this, source, name] { start(source, name); };
    m_heading->setText(tr("Testing %1…").arg(name));
    m_summary->clear();
    m_again->setEnabled(false);
    m_copy->setEnabled(false);
    m_test->start(source);
    m_list->clear();
    for (int i = 0; i < m_test->checks().size(); ++i) {
        auto *item = new QTreeWidgetItem(m_list);
        item->setText(TitleColumn, m_test->checks().at(i).title);
        showCheck(i);
    }
    m_list->setCurrentItem(m_list->topLevelItem(0));
    m_list->setFocus();
}

void ConnectionTestDialog::showCheck(int index)
{
    QTreeWidgetItem *item = m_list->topLevelItem(index);
    if (!item) return; // the list is being built
    const ConnectionCheck &check = m_test->checks().at(index);
    item->setIcon(ResultColumn, outcomeIcon(check.outcome, style()));
    item->setText(ResultColumn, outcomeText(check.outcome));
    item->setText(TimeColumn, check.elapsedMs >= 0 ? tr("%1 ms").arg(check.elapsedMs) : QString());
    item->setText(DetailColumn, QString(check.detail).replace(u'\n', QStringLiteral("; ")));
    item->setToolTip(DetailColumn, check.detail);
    // A screen reader hears the outcome with the part, as the eye sees icon and word together.
    item->setData(TitleColumn, Qt::AccessibleDescriptionRole, tr("%1: %2").arg(outcomeText(check.outcome), check.detail));
    if (item == m_list->currentItem()) showSelected();
}

void ConnectionTestDialog::showSelected()
{
    const int index = m_list->indexOfTopLevelItem(m_list->currentItem());
    if (index < 0 || index >= m_test->checks().size()) {
        m_detail->clear();
        return;
    }
    const ConnectionCheck &check = m_test->checks().at(index);
    QString text = check.title + QStringLiteral(" — ") + outcomeText(check.outcome);
    if (!check.detail.isEmpty()) text += u'\n' + check.detail;
    if (!check.fix.isEmpty()) text += QStringLiteral("\n\n") + check.fix;
    m_detail->setText(text);
}

void ConnectionTestDialog::onFinished()
{
    m_heading->setText(m_test->passed() ? tr("%1 works.").arg(m_name) : tr("%1 has a problem; select a part to see what to change.").arg(m_name));
    m_summary->setText(m_test->summary());
    m_again->setEnabled(true);
    m_copy->setEnabled(true);
    // The first part that failed (else the first warning) is where the person looks next.
    for (const Outcome wanted : {Outcome::Failed, Outcome::Warning}) {
        for (int i = 0; i < m_test->checks().size(); ++i) {
            if (m_test->checks().at(i).outcome == wanted) {
                m_list->setCurrentItem(m_list->topLevelItem(i));
                return;
            }
        }
    }
}

QString ConnectionTestDialog::report() const
{
    QStringList lines{tr("Starforge connection test of %1: %2").arg(m_name, m_test->summary()), QString()};
    for (const ConnectionCheck &check : m_test->checks()) {
        lines << QStringLiteral("%1: %2%3 — %4")
                     .arg(check.title, outcomeText(check.outcome), check.elapsedMs >= 0 ? tr(" (%1 ms)").arg(check.elapsedMs) : QString(), check.detail);
        if (!check.fix.isEmpty()) lines << QStringLiteral("    ") + QString(check.fix).replace(u'\n', QStringLiteral("\n    "));
    }
    return lines.join(u'\n');
}

} // namespace Starforge::Gui
