// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace slp::test {

// The real Node.js clients of tests/node (the openai package, ws), as the integration tests
// run them. A suite runs them with `node` from PATH; its `.node18` twin sets SLP_NODE to
// tests/node/debian-node18.sh, so the same clients also run on Debian 12's own Node 18.

// The Node.js to run: SLP_NODE, else `node`.
QString nodeProgram();
// `name` in tests/node (SLP_NODE_DIR).
QString nodeScript(const QString &name);
// Why the clients cannot run here: `package` missing from tests/node/node_modules (a failure:
// scripts/install-deps.sh installs it), or empty.
QString nodePackageMissing(const QString &package);
// Why the Node named by SLP_NODE is not to be had on this machine (its runner exits 77 and
// says why; the suite then skips), or empty.
QString nodeSkipReason();

} // namespace slp::test
