#pragma once

#include "scalelab/core/plan.h"

#include <QByteArray>
#include <QString>

namespace scalelab::document {

/// The plan as a DeepSpeed configuration file (JSON): train_batch_size,
/// train_micro_batch_size_per_gpu, gradient_accumulation_steps (the plan's m), bf16, the ZeRO
/// stage, and under full recomputation the activation_checkpointing section (partitioned over
/// the tensor-parallel ranks when sequence parallelism keeps the saved inputs split). Validates
/// the plan first and refuses what DeepSpeed itself refuses (ZeRO-2/3 with pipeline stages,
/// weights other than bf16 or fp32) with a core::InputError naming the field.
QByteArray deepSpeedConfig(const core::PlanInputs& in);

/// The plan as Megatron-LM command-line arguments, one argument a line joined by " \" so the
/// text pastes into a launch script: model shape, the tensor, pipeline, virtual-pipeline and
/// expert sizes, sequence parallelism, recompute granularity, the distributed optimizer for
/// ZeRO stages >= 1, micro and global batch. Validates the plan first and refuses layouts
/// Megatron-LM refuses (layers that do not split evenly over the stages, interleaving on two
/// stages or fewer or with m not a multiple of p, key/value groups that the tensor-parallel
/// ranks cannot share, expert with tensor parallelism but no sequence parallelism) with a
/// core::InputError naming the field.
QString megatronArguments(const core::PlanInputs& in);

/// The files a plan is saved as.
enum class PlanFormat {
    DeepSpeed, ///< deepSpeedConfig(), a JSON file
    Megatron, ///< megatronArguments(), a text file
};

/// Writes `bytes` to `path` through QSaveFile, so a failed write leaves nothing half-written.
/// Returns an empty string, or "cannot write <path>: <reason>".
QString writeWhole(const QString& path, const QByteArray& bytes);

/// Writes the plan `in` as `format` to `path`. Returns an empty string, or why nothing was
/// written: a plan the framework refuses names its field ("plan.zero_stage: ..."), a file that
/// cannot be written says so ("cannot write ...").
QString savePlan(const core::PlanInputs& in, PlanFormat format, const QString& path);

} // namespace scalelab::document
