#pragma once

// The sandbox's nodes: "--fleet h200:4x8,h100:2x8,cpu:2x0" is four nodes of 8 GPUs labelled
// with the series h200, two of h100 and two CPU-only nodes; "--fleet scale:5000" is a
// benchmark fleet of 5,000 GPU nodes with ten background pods each.

#include "core/util/result.h"

#include <QJsonObject>
#include <QList>
#include <QString>

namespace Starforge::Sandbox {

struct NodePool
{
    QString series;
    int nodes = 0;
    int gpusPerNode = 0;
};

struct FleetSpec
{
    QList<NodePool> pools;
    int backgroundPodsPerNode = 0;  // scale fleets only

    static Result<FleetSpec> parse(const QString &text);
    // Without --fleet: room for every JobSpec in examples/ (grpo-two-pools takes three 8-GPU
    // h200 nodes, a pool of two and one of one on nodes of their own), the other series beside
    // it for the capacity views, and a CPU node for the submitter pods.
    static QString defaultSpec() { return QStringLiteral("h200:3x8,h100:2x8,a100:1x4,cpu:1x0"); }
    int nodeCount() const;
};

class ObjectStore;

// Creates the Node objects (and a scale fleet's background pods) in the store.
void createFleet(ObjectStore &store, const FleetSpec &fleet, const QString &seriesLabel, const QString &backgroundNamespace);

// A Node as a kubelet registers it: capacity and allocatable, Ready condition, node info.
QJsonObject makeNode(const QString &name, const QString &series, int gpus, const QString &seriesLabel);

} // namespace Starforge::Sandbox
