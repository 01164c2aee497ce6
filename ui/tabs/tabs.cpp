#include "tabs.h"

#include "memorytab.h"

namespace scalelab::ui {

QList<Tab*> createTabs(QWidget* parent)
{
    return {new MemoryTab(parent)};
}

QStringList tabNames()
{
    return {"memory"};
}

} // namespace scalelab::ui
