// The pipeline tab's inputs: stages, microbatches, the schedule and the pass times; and the
// bubble definition its figures and curves use.

#include "fields.h"

#include <QtGlobal>
#include <algorithm>

namespace scalelab::document::detail {

using core::PipelineInputs;
using core::Scenario;

namespace {

// A pass time: a real number shown to two decimals.
Field passTime(Field f)
{
    f.decimals = 2;
    f.step = 0.1;
    return f;
}

} // namespace

void addPipelineFields(std::vector<Field>& out)
{
    constexpr auto S = core::Section::Pipeline;
    out.push_back(bound<&Scenario::pipeline, &PipelineInputs::stages>(numberField(
        S, "pipeline.stages", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Stages"), "p",
        QT_TRANSLATE_NOOP("Field", "stages"),
        QT_TRANSLATE_NOOP("Field", "Pipeline stages: consecutive layers on one rank each."), 1,
        32)));
    out.push_back(bound<&Scenario::pipeline, &PipelineInputs::microbatches>(numberField(
        S, "pipeline.microbatches", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Microbatches"),
        "m", QT_TRANSLATE_NOOP("Field", "microbatches"),
        QT_TRANSLATE_NOOP("Field",
                          "Microbatches the batch is split into; the pipeline fills and drains "
                          "once per batch."),
        1, 256)));
    out.push_back(bound<&Scenario::pipeline, &PipelineInputs::schedule>(
        choiceField(S, "pipeline.schedule", QT_TRANSLATE_NOOP("Field", "Sc&hedule"),
                    QT_TRANSLATE_NOOP("Field", "The order in which each stage runs its passes."),
                    {"gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2", "dualpipe", "dualpipev"},
                    {QT_TRANSLATE_NOOP("Field", "GPipe: all forwards, then all backwards"),
                     QT_TRANSLATE_NOOP("Field", "1F1B: one forward, one backward"),
                     QT_TRANSLATE_NOOP("Field", "Interleaved 1F1B: v chunks per stage"),
                     QT_TRANSLATE_NOOP("Field", "ZB-H1: W passes fill the tail, 1F1B's memory"),
                     QT_TRANSLATE_NOOP("Field", "ZB-H2: no bubble, up to 2p\u22121 in flight"),
                     QT_TRANSLATE_NOOP("Field",
                                       "DualPipe: fed from both ends, F&B overlapped, 2\u00d7 "
                                       "parameters"),
                     QT_TRANSLATE_NOOP("Field",
                                       "DualPipeV: one V over p/2 devices, 2\u00d7 "
                                       "parameters")})));
    out.push_back(bound<&Scenario::pipeline, &PipelineInputs::virtualStages>(numberField(
        S, "pipeline.virtual_stages", FieldKind::Whole,
        QT_TRANSLATE_NOOP("Field", "&Chunks per stage"), "v", QT_TRANSLATE_NOOP("Field", "chunks"),
        QT_TRANSLATE_NOOP("Field",
                          "Model chunks per stage in the interleaved schedule (Megatron-LM's "
                          "virtual stages); its curve and bars use it too."),
        1, 8)));
    out.push_back(bound<&Scenario::pipeline, &PipelineInputs::forwardTime>(passTime(numberField(
        S, "pipeline.forward_time", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "&Forward time"),
        "f", QT_TRANSLATE_NOOP("Field", "time units"),
        QT_TRANSLATE_NOOP("Field", "Time of one microbatch's forward pass through one stage."), 0.1,
        10))));
    out.push_back(bound<&Scenario::pipeline, &PipelineInputs::backwardTime>(passTime(numberField(
        S, "pipeline.backward_time", FieldKind::Number,
        QT_TRANSLATE_NOOP("Field", "&Backward time"), "b", QT_TRANSLATE_NOOP("Field", "time units"),
        QT_TRANSLATE_NOOP("Field",
                          "Time of one microbatch's backward pass through one stage: B, the "
                          "gradient of the input. With a weight time of 0 it is the whole "
                          "backward (about twice the forward)."),
        0.1, 10))));
    // W: 0 keeps the files written before the backward was split (backward = B + W) the same.
    out.push_back(bound<&Scenario::pipeline, &PipelineInputs::weightTime>(passTime(numberField(
        S, "pipeline.weight_time", FieldKind::Number,
        QT_TRANSLATE_NOOP("Field", "&Weight-gradient time"), "w",
        QT_TRANSLATE_NOOP("Field", "time units"),
        QT_TRANSLATE_NOOP("Field",
                          "Time of one microbatch's weight-gradient pass W through one stage. "
                          "The zero-bubble schedules run it apart from B to fill the bubble; "
                          "the others run B and W as one backward of b + w."),
        0, 10))));
    // A view setting: which of the two definitions of one bubble the figures and curves use.
    out.push_back(
        bound<&Scenario::pipelineDisplay, &core::PipelineDisplay::megatronBubble>(choiceField(
            S, "pipeline.bubble_definition", QT_TRANSLATE_NOOP("Field", "&Definition"),
            QT_TRANSLATE_NOOP("Field",
                              "Two definitions of one bubble: the idle share of the whole "
                              "run, or the idle time measured against the time the work "
                              "alone would take."),
            {"chapter", "megatron"},
            {QT_TRANSLATE_NOOP("Field", "Idle share of the run (chapter): (p\u22121)/(m+p\u22121)"),
             QT_TRANSLATE_NOOP("Field", "Bubble over ideal time (Megatron-LM): (p\u22121)/m")})));
}

// No rule couples the pipeline's inputs: an interleaved schedule whose microbatches are not a
// multiple of the stages is refused by core and named in the tab's message line (the lesson is
// the refusal), not snapped to the next multiple.
void normalizePipeline(const core::Scenario&, core::Scenario&, const Field*) { }

} // namespace scalelab::document::detail
