#include "gui/jobs/jobsfiltermodel.h"

#include "models/jobsmodel.h"
#include "models/tones.h"

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
    // Text on a tint of the same hue (dark on light, light on dark, as the palette is):
    // readable, and still tells states apart for people who cannot tell the hues apart, since
    // the cell also names the state.
    const auto colours = [](const std::pair<QColor, QColor> &chip) { return Colours{chip.first, chip.second}; };
    switch (state) {
    case Job::JobState::Submitting:
    case Job::JobState::Pending:
        return colours(Tones::chip(Tones::Tone::Warning));
    case Job::JobState::Running:
        return colours(Tones::chip(Tones::Tone::Info));
    case Job::JobState::Succeeded:
        return colours(Tones::chip(Tones::Tone::Success));
    case Job::JobState::Failed:
        return colours(Tones::chip(Tones::Tone::Error));
    case Job::JobState::Stopped:   // no hue: grey on grey, 7:1 either way
        return Tones::isDark() ? Colours{QColor(0xd0, 0xd0, 0xd0), QColor(0x3a, 0x3a, 0x3a)} : Colours{QColor(0x4a, 0x4a, 0x4a), QColor(0xe2, 0xe2, 0xe2)};
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
