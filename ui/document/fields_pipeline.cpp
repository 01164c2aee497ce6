// The pipeline tab's inputs: stages, microbatches, the schedule and the pass times.

#include "fields.h"

#include <QtGlobal>
#include <algorithm>

namespace scalelab::document::detail {

using core::Scenario;

void addPipelineFields(std::vector<Field>& out)
{
    constexpr auto S = core::Section::Pipeline;
    {
        Field f = bound<&Scenario::pipeline, &core::PipelineInputs::stages>(numberField(S, "pipeline.stages", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Stages"), "p", QT_TRANSLATE_NOOP("Field", "stages"),
            QT_TRANSLATE_NOOP("Field", "Pipeline stages: consecutive layers on one rank each."), 1, 32));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::pipeline, &core::PipelineInputs::microbatches>(numberField(S, "pipeline.microbatches", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Microbatches"), "m", QT_TRANSLATE_NOOP("Field", "microbatches"),
            QT_TRANSLATE_NOOP("Field", "Microbatches the batch is split into; the pipeline fills and drains once per batch."), 1, 256));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::pipeline, &core::PipelineInputs::schedule>(choiceField(S, "pipeline.schedule", QT_TRANSLATE_NOOP("Field", "Sc&hedule"), QT_TRANSLATE_NOOP("Field", "The order each stage runs its forward and backward passes in."),
            {"gpipe", "1f1b", "interleaved"},
            {QT_TRANSLATE_NOOP("Field", "GPipe: all forwards, then all backwards"), QT_TRANSLATE_NOOP("Field", "1F1B: one forward, one backward"), QT_TRANSLATE_NOOP("Field", "Interleaved 1F1B: v chunks per stage")}));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::pipeline, &core::PipelineInputs::virtualStages>(numberField(S, "pipeline.virtual_stages", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Chunks per stage"), "v", QT_TRANSLATE_NOOP("Field", "chunks"),
            QT_TRANSLATE_NOOP("Field", "Model chunks per stage in the interleaved schedule (Megatron-LM's virtual stages); its curve and bars use it too."), 1, 8));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::pipeline, &core::PipelineInputs::forwardTime>(numberField(S, "pipeline.forward_time", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "&Forward time"), "f", QT_TRANSLATE_NOOP("Field", "time units"),
            QT_TRANSLATE_NOOP("Field", "Time of one microbatch's forward pass through one stage."), 0.1, 10));
        f.decimals = 2;
        f.step = 0.1;
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::pipeline, &core::PipelineInputs::backwardTime>(numberField(S, "pipeline.backward_time", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "&Backward time"), "b", QT_TRANSLATE_NOOP("Field", "time units"),
            QT_TRANSLATE_NOOP("Field", "Time of one microbatch's backward pass through one stage (about twice the forward)."), 0.1, 10));
        f.decimals = 2;
        f.step = 0.1;
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::pipelineDisplay, &core::PipelineDisplay::megatronBubble>(choiceField(S, "pipeline.bubble_definition", QT_TRANSLATE_NOOP("Field", "&Definition"), QT_TRANSLATE_NOOP("Field", "Which bubble fraction the figures and the curve show."),
            {"chapter", "megatron"},
            {QT_TRANSLATE_NOOP("Field", "Idle share of the run (chapter): (p\u22121)/(m+p\u22121)"), QT_TRANSLATE_NOOP("Field", "Bubble over ideal time (Megatron-LM): (p\u22121)/m")}));
        out.push_back(std::move(f));
    }
}

void normalizePipeline(const core::Scenario&, core::Scenario&, const Field*) {}

} // namespace scalelab::document::detail
