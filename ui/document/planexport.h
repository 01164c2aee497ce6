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

} // namespace scalelab::document
