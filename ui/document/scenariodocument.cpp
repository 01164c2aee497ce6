#include "scenariodocument.h"

#include "fields.h"

#include <QDateTime>
#include <QUndoCommand>
#include <QUndoStack>
#include <algorithm>
#include <cmath>

namespace scalelab::document {

/// One change of the scenario: the whole scenario before and after. A step that merges edits
/// of one field keeps the first "before"; one that ends where it began vanishes.
class ScenarioCommand : public QUndoCommand {
public:
    ScenarioCommand(ScenarioDocument* document, core::Scenario before, core::Scenario after,
                    const QString& text, QString mergeKey)
        : QUndoCommand(text)
        , m_document(document)
        , m_before(std::move(before))
        , m_after(std::move(after))
        , m_mergeKey(std::move(mergeKey))
        , m_when(QDateTime::currentMSecsSinceEpoch())
    {
    }

    int id() const override { return m_mergeKey.isEmpty() ? -1 : 1; }

    bool mergeWith(const QUndoCommand* other) override
    {
        const auto* next = static_cast<const ScenarioCommand*>(other);
        if (next->m_mergeKey != m_mergeKey || next->m_when - m_when > ScenarioDocument::kMergeMs)
            return false;
        m_after = next->m_after;
        m_when = next->m_when;
        setObsolete(m_before == m_after);
        return true;
    }

    void undo() override { m_document->apply(m_before); }
    void redo() override { m_document->apply(m_after); }

private:
    ScenarioDocument* m_document;
    core::Scenario m_before, m_after;
    QString m_mergeKey;
    qint64 m_when;
};

namespace {

void clampFollowingMaxima(core::Scenario& s, core::Section section)
{
    for (const Field* f : sectionFields(section))
        if (f->maximumFrom && f->get(s) > f->maximumIn(s))
            f->set(s, f->maximumIn(s));
}

} // namespace

void normalizeSection(const core::Scenario& before, core::Scenario& after, core::Section section,
                      const Field* field)
{
    using Rule = void (*)(const core::Scenario&, core::Scenario&, const Field*);
    // In the order of core::Section.
    static constexpr Rule kRules[] = {
        &detail::normalizeMemory,   &detail::normalizeZero,    &detail::normalizeTensorParallel,
        &detail::normalizePipeline, &detail::normalizeExperts, &detail::normalizeFp8,
        &detail::normalizePlan};
    static_assert(std::size(kRules) == core::kSectionNames.size());
    clampFollowingMaxima(after, section);
    kRules[static_cast<std::size_t>(section)](before, after, field);
}

ScenarioDocument::ScenarioDocument(QObject* parent)
    : ScenarioDocument(core::Scenario{}, parent)
{
}

ScenarioDocument::ScenarioDocument(const core::Scenario& scenario, QObject* parent)
    : QObject(parent)
    , m_scenario(scenario)
    , m_undo(new QUndoStack(this))
{
}

double ScenarioDocument::value(const QString& key) const
{
    const Field* f = findField(key);
    return f ? f->get(m_scenario) : 0.0;
}

bool ScenarioDocument::setValue(const QString& key, double value)
{
    const Field* f = findField(key);
    if (!f || std::isnan(value))
        return false;
    core::Scenario after = m_scenario;
    f->set(after, value);
    normalizeSection(m_scenario, after, f->section, f);
    if (sameSection(after, m_scenario, f->section))
        return false;
    // Edits of one section in quick succession (a drag, a held key, batch then sequence length)
    // are one step, as they were one change in the user's mind.
    const std::string_view section = core::sectionName(f->section);
    push(std::move(after), tr("Change %1").arg(f->translatedLabel().remove('&')),
         QString::fromLatin1(section.data(), static_cast<qsizetype>(section.size())));
    return true;
}

bool ScenarioDocument::edit(core::Section section, const QString& text,
                            const std::function<void(core::Scenario&)>& change)
{
    core::Scenario after = m_scenario;
    change(after);
    normalizeSection(m_scenario, after, section, nullptr);
    if (after == m_scenario)
        return false;
    push(std::move(after), text, {});
    return true;
}

bool ScenarioDocument::replace(const core::Scenario& scenario, const QString& text)
{
    if (scenario == m_scenario)
        return false;
    push(scenario, text, {});
    return true;
}

bool ScenarioDocument::resetSection(core::Section section, const QString& text)
{
    core::Scenario after = m_scenario;
    copySection(core::Scenario{}, after, section);
    return replace(after, text);
}

void ScenarioDocument::load(const core::Scenario& scenario)
{
    m_undo->clear();
    apply(scenario);
}

void ScenarioDocument::push(core::Scenario after, const QString& text, const QString& mergeKey)
{
    m_undo->push(new ScenarioCommand(this, m_scenario, std::move(after), text, mergeKey));
}

void ScenarioDocument::apply(const core::Scenario& scenario)
{
    const core::Scenario before = std::exchange(m_scenario, scenario);
    for (std::size_t i = 0; i < core::kSectionNames.size(); ++i) {
        const auto section = static_cast<core::Section>(i);
        if (!sameSection(before, m_scenario, section))
            emit sectionChanged(section);
    }
}

} // namespace scalelab::document
