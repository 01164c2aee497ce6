#pragma once

#include <QList>
#include <QStringList>

QT_BEGIN_NAMESPACE
class QWidget;
QT_END_NAMESPACE

namespace scalelab::ui {

class Tab;

/// Every tab, in the window's order; a tab exists once its topic is built.
QList<Tab*> createTabs(QWidget* parent = nullptr);

/// The names of the tabs createTabs() makes ("memory", ...).
QStringList tabNames();

} // namespace scalelab::ui
