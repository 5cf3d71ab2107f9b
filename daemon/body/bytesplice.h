// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>

namespace slp {

// The one body edit every rename is made of: `body` with bytes [begin, end) replaced by
// `with`, every other byte copied as it is, in one allocation. Out-of-range spans return
// `body` unchanged.
QByteArray replaceSpan(const QByteArray &body, qsizetype begin, qsizetype end, QByteArrayView with);

} // namespace slp
