// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "report.h"
#include "table.h"

#include <QJsonObject>

namespace slp::bench {

// Multipart uploads as the openai client sends a transcription: a file part (1 MB, 25 MB),
// then the model part, c=1 against the sink. slp reads the model after the whole file (and
// renames nothing: the sink's route keeps its id); the lines put its added p50 beside nginx's.
QJsonObject runMultipart(const QList<Way> &ways, const Options &opt, QList<Line> &lines);

} // namespace slp::bench
