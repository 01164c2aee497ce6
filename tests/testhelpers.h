#pragma once

// Helpers shared by the Qt Test suites.

#include "scalelab/core/error.h"

#include <QTest>
#include <functional>
#include <string>

namespace scalelab::test {

/// Runs `f` and checks that it throws core::InputError naming `field`.
inline bool throwsInputError(const std::function<void()>& f, const std::string& field,
                             std::string* message = nullptr)
{
    try {
        f();
    } catch (const core::InputError& e) {
        if (message)
            *message = e.what();
        if (e.field() != field) {
            qWarning("InputError names '%s', expected '%s'", e.field().c_str(), field.c_str());
            return false;
        }
        return true;
    }
    qWarning("no InputError thrown, expected one naming '%s'", field.c_str());
    return false;
}

} // namespace scalelab::test

#define SCALELAB_VERIFY_INPUT_ERROR(expr, field)                                                   \
    QVERIFY(scalelab::test::throwsInputError([&] { (void)(expr); }, field))
