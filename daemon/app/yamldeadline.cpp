// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/yamldeadline.h"

#include <future>
#include <memory>
#include <thread>

namespace slp {

QString yamlDeadlineMessage(const QString &path)
{
    return QStringLiteral("%1: the YAML parser did not finish within %2s: yaml-cpp 0.7 hangs on "
                          "some malformed input, such as a line starting with ','; fix the file")
        .arg(path)
        .arg(kYamlDeadline.count());
}

std::optional<ConfigResult> loadWithinDeadline(const std::function<ConfigResult()> &load)
{
    auto promise = std::make_shared<std::promise<ConfigResult>>();
    std::future<ConfigResult> parsed = promise->get_future();
    std::thread([promise, load] { promise->set_value(load()); }).detach();
    if (parsed.wait_for(kYamlDeadline) != std::future_status::ready)
        return std::nullopt;
    return parsed.get();
}

} // namespace slp
