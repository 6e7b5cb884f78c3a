#include "gui/jobdetailsdialog.h"

#include <QDialogButtonBox>
#include <QLocale>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace Starforge::Gui {

namespace {

QString when(const QDateTime &t)
{
    return t.isValid() ? QLocale().toString(t.toLocalTime(), QLocale::LongFormat) : JobDetailsDialog::tr("—");
}

QString row(const QString &label, const QString &value)
{
    return QStringLiteral("<tr><td style='padding-right:12px'><b>%1</b></td><td>%2</td></tr>").arg(label.toHtmlEscaped(), value);
}

QString list(const QStringList &items)
{
    QString html = QStringLiteral("<ul>");
    for (const QString &item : items)
        html += QStringLiteral("<li>%1</li>").arg(item.toHtmlEscaped());
    return html + QStringLiteral("</ul>");
}

} // namespace

JobDetailsDialog::JobDetailsDialog(const Job::JobRecord &record, QWidget *parent)
    : QDialog(parent)
    , m_id(record.id)
    , m_text(new QTextBrowser(this))
{
    setObjectName(QStringLiteral("jobDetailsDialog"));
    setAttribute(Qt::WA_DeleteOnClose);
    setWindowTitle(tr("Job %1 — Starforge").arg(record.id));
    m_text->setObjectName(QStringLiteral("jobDetailsText"));
    m_text->setOpenLinks(false);
    m_text->setHtml(detailsHtml(record));
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_text);
    layout->addWidget(buttons);
    resize(620, 460);
}

QString JobDetailsDialog::detailsHtml(const Job::JobRecord &r)
{
    QString html = QStringLiteral("<h3>%1 <span style='font-weight:normal'>(%2)</span></h3><table>")
                       .arg(r.rayJobName.isEmpty() ? r.id.toHtmlEscaped() : r.rayJobName.toHtmlEscaped(), r.displayState().toHtmlEscaped());
    html += row(tr("Job id"), r.id.toHtmlEscaped());
    if (!r.name.isEmpty())
        html += row(tr("JobSpec"), r.name.toHtmlEscaped());
    if (!r.ns.isEmpty())
        html += row(tr("Namespace"), r.ns.toHtmlEscaped());
    if (!r.reason.isEmpty())
        html += row(tr("Reason"), r.reason.toHtmlEscaped());
    if (!r.cause.isEmpty())
        html += row(tr("Cause"), r.cause.toHtmlEscaped());
    html += row(tr("Submitted"), when(r.created));
    html += row(tr("Started"), r.started.isValid() ? when(r.started) : tr("never ran"));
    if (r.ended.isValid())
        html += row(tr("Ended"), when(r.ended));
    if (r.archived)
        html += row(tr("Archived"), tr("%1, under jobs/%2/ in the bucket").arg(when(r.archivedAt), r.id.toHtmlEscaped()));
    if (!r.capsuleSha256.isEmpty())
        html += row(tr("Capsule"), QStringLiteral("<tt>%1</tt>").arg(r.capsuleSha256.toHtmlEscaped()));
    html += QStringLiteral("</table>");
    html += QStringLiteral("<h4>%1</h4><p>%2</p>")
                .arg(tr("Message"),
                     r.message.isEmpty() ? tr("(none)") : r.message.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
    if (!r.lost.isEmpty())
        html += QStringLiteral("<h4>%1</h4>").arg(tr("Not archived")) + list(r.lost);
    if (!r.logs.isEmpty()) {
        QStringList logs;
        for (const Job::ArchivedLog &l : r.logs) {
            logs << tr("%1: %2/%3 (%4)").arg(l.role, l.pod, l.container, QLocale().formattedDataSize(l.size));
        }
        html += QStringLiteral("<h4>%1</h4>").arg(tr("Archived logs")) + list(logs);
    }
    return html;
}

} // namespace Starforge::Gui
