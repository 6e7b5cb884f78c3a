#pragma once

// One job's record, read-only: state and reason, the message, the diagnosis' cause, times,
// what the archive keeps and what it could not keep. Non-modal; deletes itself on close.

#include "core/job/jobrecord.h"

#include <QDialog>

class QTextBrowser;

namespace Starforge::Gui {

class JobDetailsDialog final : public QDialog
{
    Q_OBJECT
public:
    explicit JobDetailsDialog(const Job::JobRecord &record, QWidget *parent = nullptr);

    QString jobId() const { return m_id; }
    // The details as HTML (also what the dialog shows).
    static QString detailsHtml(const Job::JobRecord &record);

private:
    QString m_id;
    QTextBrowser *m_text;
};

} // namespace Starforge::Gui
