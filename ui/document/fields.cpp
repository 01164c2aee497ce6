#include "fields.h"

#include <QCoreApplication>
#include <QStringList>
#include <algorithm>

namespace scalelab::document {

namespace {

QString translated(const char* text)
{
    return QCoreApplication::translate("Field", text);
}

std::vector<Field> makeFields()
{
    std::vector<Field> out;
    detail::addMemoryFields(out);
    detail::addZeroFields(out);
    detail::addTensorParallelFields(out);
    detail::addPipelineFields(out);
    detail::addExpertsFields(out);
    detail::addFp8Fields(out);
    detail::addFp8TrainingFields(out);
    detail::addPlanFields(out);
    return out;
}

} // namespace

QString Field::translatedLabel() const
{
    return translated(label);
}

QString Field::translatedUnit() const
{
    return translated(unit);
}

QString Field::translatedHelp() const
{
    return translated(help);
}

QStringList Field::translatedChoices() const
{
    QStringList out;
    for (const char* text : choiceLabels)
        out << translated(text);
    return out;
}

QString Field::jsonKey() const
{
    return key.section('.', -1);
}

QString Field::jsonObject() const
{
    return key.section('.', 0, -2);
}

double Field::maximumIn(const core::Scenario& scenario) const
{
    return maximumFrom ? std::max(minimum, maximumFrom(scenario)) : maximum;
}

double Field::minimumIn(const core::Scenario& scenario) const
{
    return minimumFrom ? minimumFrom(scenario) : minimum;
}

double Field::shownIn(const core::Scenario& scenario) const
{
    return shown ? shown(scenario) : get(scenario);
}

const std::vector<Field>& fields()
{
    static const std::vector<Field> all = makeFields();
    return all;
}

std::vector<const Field*> sectionFields(core::Section section)
{
    std::vector<const Field*> out;
    for (const Field& f : fields())
        if (f.section == section)
            out.push_back(&f);
    return out;
}

const Field* findField(QStringView key)
{
    for (const Field& f : fields())
        if (f.key == key)
            return &f;
    return nullptr;
}

bool sectionFromName(QStringView name, core::Section* section)
{
    for (std::size_t i = 0; i < core::kSectionNames.size(); ++i) {
        const std::string_view n = core::kSectionNames[i];
        if (name == QLatin1StringView(n.data(), static_cast<qsizetype>(n.size()))) {
            *section = static_cast<core::Section>(i);
            return true;
        }
    }
    return false;
}

Field numberField(core::Section section, const char* key, FieldKind kind, const char* label,
                  const QString& symbol, const char* unit, const char* help, double minimum,
                  double maximum, bool log)
{
    Field f;
    f.section = section;
    f.key = QString::fromLatin1(key);
    f.kind = kind;
    f.label = label;
    f.symbol = symbol;
    f.unit = unit;
    f.help = help;
    f.minimum = minimum;
    f.maximum = maximum;
    f.log = log;
    return f;
}

Field flagField(core::Section section, const char* key, const char* label, const char* help)
{
    Field f = numberField(section, key, FieldKind::Flag, label, {}, "", help, 0, 1);
    return f;
}

Field choiceField(core::Section section, const char* key, const char* label, const char* help,
                  std::vector<const char*> names, std::vector<const char*> labels)
{
    Field f = numberField(section, key, FieldKind::Choice, label, {}, "", help, 0,
                          static_cast<double>(names.size()) - 1);
    f.choices = std::move(names);
    f.choiceLabels = std::move(labels);
    return f;
}

} // namespace scalelab::document
