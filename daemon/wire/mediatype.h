// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArrayView>

namespace slp {

// Whether a Content-Type value names the media type text/event-stream (RFC 9110 8.3.1):
// type and subtype compared case-insensitively, optional whitespace around them, then
// nothing or ";" and parameters. "text/event-streaming" or "text/event-stream-x" is not.
bool isEventStream(QByteArrayView contentType);

} // namespace slp
