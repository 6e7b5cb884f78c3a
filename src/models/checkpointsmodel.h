#pragma once

// A job's finished checkpoints as the runner reported them (Job::ServableCheckpoint): the step,
// whether vLLM can serve it as it is (a consolidated Hugging Face tree) or which of NeMo-RL's
// converters it needs first, the backend that wrote it, and the path to serve. Fed whole lists
// (from the live progress or an archived log); a list that only grows is appended as rows, so
// a view keeps its selection while a job saves; anything else resets. Steps ascend.

#include "core/job/progress.h"

#include <QAbstractTableModel>
#include <QList>

namespace Starforge::Models {

class CheckpointsModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { StepColumn, ChatColumn, BackendColumn, PathColumn, ColumnCount };
    Q_ENUM(Column)
    enum Role { CheckpointPathRole = Qt::UserRole + 1, TokenizerPathRole, ChatReadyRole };

    explicit CheckpointsModel(QObject *parent = nullptr);

    void setCheckpoints(const QList<Job::ServableCheckpoint> &checkpoints);
    void clear() { setCheckpoints({}); }
    const QList<Job::ServableCheckpoint> &checkpoints() const { return m_rows; }

    // "Ready to chat", or "Convert first: examples/converters/convert_dcp_to_hf.py", or "No HF weights".
    static QString chatText(const Job::ServableCheckpoint &checkpoint);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QList<Job::ServableCheckpoint> m_rows;
};

} // namespace Starforge::Models
