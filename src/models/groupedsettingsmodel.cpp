#include "models/groupedsettingsmodel.h"

#include "models/profilesettingsmodel.h"

#include <QFont>

namespace Starforge::Models {

// internalId: 0 for a group's row, 1 + the group's number for a setting's row.
namespace {
constexpr quintptr GroupId = 0;
}

GroupedSettingsModel::GroupedSettingsModel(QObject *parent)
    : QAbstractProxyModel(parent)
{
    const auto &all = Config::SettingsSchema::all();
    for (const Config::SettingGroup &group : Config::SettingsSchema::groups()) {
        Span span{group, 0, 0};
        for (int row = 0; row < all.size(); ++row) {
            if (all.at(row).group != group.name) continue;
            if (span.count == 0) span.first = row;
            ++span.count;
        }
        m_spans.append(span);
    }
}

void GroupedSettingsModel::setSourceModel(QAbstractItemModel *source)
{
    Q_ASSERT_X(!source || qobject_cast<ProfileSettingsModel *>(source), "GroupedSettingsModel", "the source is a ProfileSettingsModel");
    beginResetModel();
    if (sourceModel()) disconnect(sourceModel(), nullptr, this, nullptr);
    QAbstractProxyModel::setSourceModel(source);
    if (source) {
        // The settings model only ever resets (a profile shown) or changes values in place.
        connect(source, &QAbstractItemModel::modelAboutToBeReset, this, [this] { beginResetModel(); });
        connect(source, &QAbstractItemModel::modelReset, this, [this] { endResetModel(); });
        connect(source, &QAbstractItemModel::dataChanged, this, &GroupedSettingsModel::onSourceDataChanged);
        connect(source, &QAbstractItemModel::layoutAboutToBeChanged, this, [this] { Q_EMIT layoutAboutToBeChanged(); });
        connect(source, &QAbstractItemModel::layoutChanged, this, [this] { Q_EMIT layoutChanged(); });
    }
    endResetModel();
}

ProfileSettingsModel *GroupedSettingsModel::settings() const
{
    return static_cast<ProfileSettingsModel *>(sourceModel());
}

int GroupedSettingsModel::spanOf(int sourceRow) const
{
    for (int i = 0; i < m_spans.size(); ++i) {
        if (sourceRow >= m_spans.at(i).first && sourceRow < m_spans.at(i).first + m_spans.at(i).count) return i;
    }
    return -1;
}

void GroupedSettingsModel::onSourceDataChanged(const QModelIndex &topLeft, const QModelIndex &bottomRight, const QList<int> &roles)
{
    // A range may cross groups; tell each group's part of it.
    for (int i = 0; i < m_spans.size(); ++i) {
        const Span &span = m_spans.at(i);
        const int first = std::max(topLeft.row(), span.first);
        const int last = std::min(bottomRight.row(), span.first + span.count - 1);
        if (first > last) continue;
        Q_EMIT dataChanged(createIndex(first - span.first, topLeft.column(), quintptr(i + 1)),
                           createIndex(last - span.first, bottomRight.column(), quintptr(i + 1)), roles);
    }
}

bool GroupedSettingsModel::isGroup(const QModelIndex &index) const
{
    return index.isValid() && index.internalId() == GroupId;
}

QModelIndex GroupedSettingsModel::indexOfKey(const QString &key, int column) const
{
    if (!sourceModel()) return {};
    const int row = settings()->rowOf(key);
    return row < 0 ? QModelIndex() : mapFromSource(sourceModel()->index(row, column));
}

QModelIndex GroupedSettingsModel::index(int row, int column, const QModelIndex &parent) const
{
    if (row < 0 || column < 0 || row >= rowCount(parent) || column >= columnCount(parent)) return {};
    if (!parent.isValid()) return createIndex(row, column, GroupId);
    return createIndex(row, column, quintptr(parent.row() + 1));
}

QModelIndex GroupedSettingsModel::parent(const QModelIndex &child) const
{
    if (!child.isValid() || child.internalId() == GroupId) return {};
    return createIndex(int(child.internalId() - 1), 0, GroupId);
}

QModelIndex GroupedSettingsModel::sibling(int row, int column, const QModelIndex &index) const
{
    if (!index.isValid()) return {};
    return this->index(row, column, parent(index));
}

int GroupedSettingsModel::rowCount(const QModelIndex &parent) const
{
    if (!sourceModel()) return 0;
    if (!parent.isValid()) return sourceModel()->rowCount() > 0 ? int(m_spans.size()) : 0;
    if (parent.internalId() == GroupId && parent.column() == 0) return m_spans.at(parent.row()).count;
    return 0;
}

int GroupedSettingsModel::columnCount(const QModelIndex &) const
{
    return sourceModel() ? sourceModel()->columnCount() : 0;
}

bool GroupedSettingsModel::hasChildren(const QModelIndex &parent) const
{
    return rowCount(parent) > 0;
}

QModelIndex GroupedSettingsModel::mapToSource(const QModelIndex &proxyIndex) const
{
    if (!sourceModel() || !proxyIndex.isValid() || proxyIndex.internalId() == GroupId) return {};
    const Span &span = m_spans.at(int(proxyIndex.internalId() - 1));
    return sourceModel()->index(span.first + proxyIndex.row(), proxyIndex.column());
}

QModelIndex GroupedSettingsModel::mapFromSource(const QModelIndex &sourceIndex) const
{
    if (!sourceIndex.isValid()) return {};
    const int span = spanOf(sourceIndex.row());
    if (span < 0) return {};
    return createIndex(sourceIndex.row() - m_spans.at(span).first, sourceIndex.column(), quintptr(span + 1));
}

QVariant GroupedSettingsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
    if (index.internalId() == GroupId) {
        const Config::SettingGroup &group = m_spans.at(index.row()).group;
        switch (role) {
        case GroupRole:
            return true;
        case AboutRole:
            return group.translatedAbout();
        case Qt::DisplayRole:
        case Qt::AccessibleTextRole:
            return index.column() == 0 ? group.translatedName() : QVariant();
        case Qt::ToolTipRole:
        case Qt::AccessibleDescriptionRole:
            return index.column() == 0 ? group.translatedAbout() : QVariant();
        case Qt::FontRole:
            if (index.column() == 0) {
                QFont bold;
                bold.setBold(true);
                return bold;
            }
            return {};
        default:
            return {};
        }
    }
    const QModelIndex source = mapToSource(index);
    const Config::SettingDefinition &d = Config::SettingsSchema::all().at(source.row());
    switch (role) {
    case GroupRole:
        return false;
    case Qt::DisplayRole:
        if (index.column() == ProfileSettingsModel::KeyColumn) return d.translatedLabel();
        break;
    case Qt::AccessibleTextRole:
        if (index.column() == ProfileSettingsModel::KeyColumn) return d.translatedLabel();
        break;
    case Qt::AccessibleDescriptionRole:
        // A screen reader hears the variable too, which the eye reads under the label.
        if (index.column() == ProfileSettingsModel::KeyColumn) return tr("%1. %2").arg(d.key, d.translatedHelp());
        break;
    case Qt::ToolTipRole:
        if (index.column() == ProfileSettingsModel::KeyColumn) {
            return tr("<b>%1</b> (environment variable <code>%2</code>)<br>%3").arg(d.translatedLabel().toHtmlEscaped(), d.key, d.translatedHelp().toHtmlEscaped());
        }
        break;
    case Qt::FontRole:
        if (index.column() == ProfileSettingsModel::KeyColumn) {
            // The source sets the key's monospace; the label is ordinary text (bold while edited).
            QFont font;
            font.setBold(source.data(ProfileSettingsModel::PendingRole).toBool());
            return font;
        }
        break;
    default:
        break;
    }
    return source.data(role);
}

Qt::ItemFlags GroupedSettingsModel::flags(const QModelIndex &index) const
{
    if (!index.isValid()) return Qt::NoItemFlags;
    if (index.internalId() == GroupId) return Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    return mapToSource(index).flags();
}

QVariant GroupedSettingsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    return sourceModel() ? sourceModel()->headerData(section, orientation, role) : QVariant();
}

} // namespace Starforge::Models
