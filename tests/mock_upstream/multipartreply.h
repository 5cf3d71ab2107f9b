// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "mockserver.h"

#include <QByteArray>
#include <QStringList>

namespace slp::mock {

// A multipart/form-data POST (a transcription, an image edit) answered the way a speech or
// image backend answers, plus what tests check the proxy by: under "slp_mock", the SHA-256
// and size of the body as it arrived, the "model" part's value as this mock reads it, and
// each part's name, filename and content SHA-256. The parse here is the mock's own, plain
// QByteArray searches, so it never shares a bug with the scanner under test.
bool isMultipart(const Request &request);
struct MultipartReply
{
    int status = 200;
    QByteArray body;
};
MultipartReply multipartReply(const Request &request, const QStringList &models, qint64 created);

} // namespace slp::mock
