#pragma once

// The code folder of a job as a tree (the submission wizard's first page): every path a Capsule
// build walks (Job::listCapsuleTree), with its size; a path the Capsule leaves out is greyed and
// says which pattern dropped it. Folders show the bytes of the packed files they hold.

#include "core/job/capsule.h"

#include <QAbstractItemModel>

#include <memory>
#include <vector>

namespace Starforge::Models {

class CodeTreeModel final : public QAbstractItemModel
{
    Q_OBJECT
public:
    enum Column { NameColumn, SizeColumn, ExcludedByColumn, ColumnCount };
    Q_ENUM(Column)
    enum Role {
        PathRole = Qt::UserRole + 1,  // QString, relative to the code folder
        ExcludedRole,                 // bool: the Capsule leaves it out
        SizeRole,                     // qint64: a file's bytes, or a folder's packed bytes
    };
    Q_ENUM(Role)

    explicit CodeTreeModel(QObject *parent = nullptr);
    ~CodeTreeModel() override;

    // Replaces the tree with a listing's entries.
    void setListing(const Job::CapsuleListing &listing);
    void clear();

    // The index of a path ("configs/run.yaml"), or invalid.
    QModelIndex indexOf(const QString &path) const;

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // "1.2 MiB", "512 bytes": the size as the tree shows it.
    static QString formatSize(qint64 bytes);

private:
    struct Node
    {
        QString name;
        QString path;
        bool isDir = false;
        qint64 size = 0;
        QString excludedBy;
        Node *parent = nullptr;
        int row = 0;
        std::vector<std::unique_ptr<Node>> children;
    };
    Node *nodeOf(const QModelIndex &index) const;

    std::unique_ptr<Node> m_root;
};

} // namespace Starforge::Models
