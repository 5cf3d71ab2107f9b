// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Everything integration tests use, in one include.
#include "childprocess.h"
#include "command.h"
#include "deadport.h"
#include "httpclient.h"
#include "jsonbody.h"
#include "mockupstream.h"
#include "nodeclients.h"
#include "quietwindow.h"
#include "scriptserver.h"
#include "slpdaemon.h"

#include <QtGlobal>

namespace slp::test {
// True under scripts/test-asan.sh: memory bounds (RSS) do not hold under ASan, whose quarantine
// and shadow memory inflate every process; the functional checks around them still run.
inline bool sanitizedBuild()
{
    return qEnvironmentVariableIsSet("SLP_SANITIZED");
}
} // namespace slp::test
