#pragma once

// The Jobs panel's view of JobsModel: a text filter over id, name and message, a state filter
// (all jobs, the active ones, the ended ones), sorting by the model's SortRole, and the state
// cells coloured by state (Pending amber, Running blue, Succeeded green, Failed red, Stopped
// grey; an archived job by its outcome).

#include "core/job/jobrecord.h"

#include <QColor>
#include <QSortFilterProxyModel>

namespace Starforge::Gui {

class JobsFilterModel final : public QSortFilterProxyModel
{
    Q_OBJECT
public:
    enum class StateFilter { All, Active, Ended };
    Q_ENUM(StateFilter)

    explicit JobsFilterModel(QObject *parent = nullptr);

    void setFilterText(const QString &text);
    QString filterText() const { return m_text; }
    void setStateFilter(StateFilter filter);
    StateFilter stateFilter() const { return m_state; }

    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;

    struct Colours
    {
        QColor text;
        QColor background;
    };
    static Colours stateColours(Job::JobState state);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    QString m_text;
    StateFilter m_state = StateFilter::All;
};

} // namespace Starforge::Gui
