#pragma once

// Timing a widget's repaints in a benchmark: the median and the worst of a number of full,
// synchronous repaints (QWidget::repaint), in milliseconds.

#include <QElapsedTimer>
#include <QList>
#include <QWidget>

#include <algorithm>

namespace Starforge::Bench {

struct Repaint
{
    double median = 0;
    double worst = 0;
};

inline Repaint repaintTimes(QWidget *widget, int rounds)
{
    QList<double> ms;
    for (int i = 0; i < rounds; ++i) {
        QElapsedTimer t;
        t.start();
        widget->repaint();
        ms << double(t.nsecsElapsed()) / 1e6;
    }
    std::sort(ms.begin(), ms.end());
    return {ms.at(ms.size() / 2), ms.constLast()};
}

} // namespace Starforge::Bench
