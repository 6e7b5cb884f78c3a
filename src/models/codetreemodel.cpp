#include "models/codetreemodel.h"

#include "models/tones.h"

#include <QColor>
#include <QHash>
#include <QLocale>

namespace Starforge::Models {

CodeTreeModel::CodeTreeModel(QObject *parent)
    : QAbstractItemModel(parent)
    , m_root(std::make_unique<Node>())
{
    m_root->isDir = true;
}

CodeTreeModel::~CodeTreeModel() = default;

void CodeTreeModel::clear()
{
    beginResetModel();
    m_root = std::make_unique<Node>();
    m_root->isDir = true;
    endResetModel();
}

void CodeTreeModel::setListing(const Job::CapsuleListing &listing)
{
    beginResetModel();
    m_root = std::make_unique<Node>();
    m_root->isDir = true;
    // The walk lists a folder before what it holds, so each parent exists when its child comes.
    QHash<QString, Node *> folders{{QString(), m_root.get()}};
    for (const Job::CapsuleTreeEntry &entry : listing.entries) {
        const qsizetype slash = entry.path.lastIndexOf(u'/');
        Node *parentNode = folders.value(slash < 0 ? QString() : entry.path.left(slash), m_root.get());
        auto node = std::make_unique<Node>();
        node->name = entry.path.mid(slash + 1);
        node->path = entry.path;
        node->isDir = entry.isDir;
        node->size = entry.size;
        node->excludedBy = entry.excludedBy;
        node->parent = parentNode;
        node->row = static_cast<int>(parentNode->children.size());
        if (entry.isDir) folders.insert(entry.path, node.get());
        // A packed file's bytes count in every folder above it.
        if (!entry.isDir && entry.excludedBy.isEmpty()) {
            for (Node *up = parentNode; up; up = up->parent) up->size += entry.size;
        }
        parentNode->children.push_back(std::move(node));
    }
    endResetModel();
}

CodeTreeModel::Node *CodeTreeModel::nodeOf(const QModelIndex &index) const
{
    return index.isValid() ? static_cast<Node *>(index.internalPointer()) : m_root.get();
}

QModelIndex CodeTreeModel::indexOf(const QString &path) const
{
    Node *node = m_root.get();
    QModelIndex at;
    for (const QString &part : path.split(u'/', Qt::SkipEmptyParts)) {
        Node *next = nullptr;
        for (const auto &child : node->children) {
            if (child->name == part) {
                next = child.get();
                break;
            }
        }
        if (!next) return {};
        at = index(next->row, 0, at);
        node = next;
    }
    return at;
}

QModelIndex CodeTreeModel::index(int row, int column, const QModelIndex &parent) const
{
    if (!hasIndex(row, column, parent)) return {};
    Node *p = nodeOf(parent);
    return createIndex(row, column, p->children[static_cast<size_t>(row)].get());
}

QModelIndex CodeTreeModel::parent(const QModelIndex &child) const
{
    if (!child.isValid()) return {};
    Node *p = nodeOf(child)->parent;
    if (!p || p == m_root.get()) return {};
    return createIndex(p->row, 0, p);
}

int CodeTreeModel::rowCount(const QModelIndex &parent) const
{
    if (parent.isValid() && parent.column() != 0) return 0;
    return static_cast<int>(nodeOf(parent)->children.size());
}

int CodeTreeModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

QString CodeTreeModel::formatSize(qint64 bytes)
{
    if (bytes == 1) return tr("1 byte");
    return bytes < 1024 ? tr("%1 bytes").arg(bytes) : QLocale::c().formattedDataSize(bytes, 1);
}

QVariant CodeTreeModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid()) return {};
    const Node *node = nodeOf(index);
    const bool excluded = !node->excludedBy.isEmpty();
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn: return node->isDir ? node->name + u'/' : node->name;
        case SizeColumn: return excluded && node->isDir ? QString() : formatSize(node->size);
        case ExcludedByColumn: return excluded ? tr("excluded: %1").arg(node->excludedBy) : QString();
        default: return {};
        }
    case Qt::ToolTipRole:
    case Qt::AccessibleDescriptionRole:
        return excluded ? tr("%1 is not packed: excluded by %2").arg(node->path, node->excludedBy) : tr("%1 is packed").arg(node->path);
    case Qt::ForegroundRole:
        return excluded ? QVariant(Tones::current().color(QPalette::PlaceholderText)) : QVariant();
    case Qt::TextAlignmentRole:
        return index.column() == SizeColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    case PathRole: return node->path;
    case ExcludedRole: return excluded;
    case SizeRole: return node->size;
    default: return {};
    }
}

QVariant CodeTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case NameColumn: return tr("Name");
    case SizeColumn: return tr("Size");
    case ExcludedByColumn: return tr("Left out by");
    default: return {};
    }
}

} // namespace Starforge::Models
