#include "gui/jobs/jobsfiltermodel.h"

#include "models/jobsmodel.h"

#include <QFont>

namespace Starforge::Gui {

using Models::JobsModel;

JobsFilterModel::JobsFilterModel(QObject *parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(JobsModel::SortRole);
    setSortCaseSensitivity(Qt::CaseInsensitive);
}

void JobsFilterModel::setFilterText(const QString &text)
{
    const QString trimmed = text.trimmed();
    if (trimmed == m_text)
        return;
    m_text = trimmed;
    invalidateRowsFilter();
}

void JobsFilterModel::setStateFilter(StateFilter filter)
{
    if (filter == m_state)
        return;
    m_state = filter;
    invalidateRowsFilter();
}

bool JobsFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    const QAbstractItemModel *source = sourceModel();
    const QModelIndex first = source->index(sourceRow, 0, sourceParent);
    const bool active = first.data(JobsModel::ActiveRole).toBool();
    if ((m_state == StateFilter::Active && !active) || (m_state == StateFilter::Ended && active))
        return false;
    if (m_text.isEmpty())
        return true;
    for (int column : { JobsModel::IdColumn, JobsModel::NameColumn, JobsModel::MessageColumn }) {
        if (source->index(sourceRow, column, sourceParent).data().toString().contains(m_text, Qt::CaseInsensitive))
            return true;
    }
    return false;
}

JobsFilterModel::Colours JobsFilterModel::stateColours(Job::JobState state)
{
    // Dark text on a light tint of the same hue: readable, and still tells states apart for
    // people who cannot tell the hues apart, since the cell also names the state.
    switch (state) {
    case Job::JobState::Submitting:
    case Job::JobState::Pending:
        return { QColor(0x7a, 0x4d, 0x00), QColor(0xff, 0xe5, 0xa8) };
    case Job::JobState::Running:
        return { QColor(0x0b, 0x4a, 0x94), QColor(0xd3, 0xe4, 0xfa) };
    case Job::JobState::Succeeded:
        return { QColor(0x17, 0x63, 0x2b), QColor(0xd2, 0xf0, 0xd9) };
    case Job::JobState::Failed:
        return { QColor(0x9b, 0x14, 0x18), QColor(0xf8, 0xd4, 0xd3) };
    case Job::JobState::Stopped:
        return { QColor(0x4a, 0x4a, 0x4a), QColor(0xe2, 0xe2, 0xe2) };
    }
    return {};
}

QVariant JobsFilterModel::data(const QModelIndex &index, int role) const
{
    if (index.isValid() && index.column() == JobsModel::StateColumn
        && (role == Qt::ForegroundRole || role == Qt::BackgroundRole || role == Qt::FontRole)) {
        const auto state = QSortFilterProxyModel::data(index, JobsModel::StateRole).value<Job::JobState>();
        const Colours colours = stateColours(state);
        if (role == Qt::ForegroundRole)
            return colours.text;
        if (role == Qt::BackgroundRole)
            return colours.background;
        QFont font;
        font.setBold(true);
        return font;
    }
    return QSortFilterProxyModel::data(index, role);
}

} // namespace Starforge::Gui
