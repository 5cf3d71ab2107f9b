// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "monitoroptions.h"

#include <QDialog>

class QCheckBox;
class QLabel;
class QLineEdit;

namespace slp::monitor {

// URL, interval, CA file, notifications on/off. Refuses to close on a bad URL or duration, saying
// why.
class SettingsDialog : public QDialog
{
    Q_OBJECT

public:
    explicit SettingsDialog(const MonitorSettings &settings, QWidget *parent = nullptr);
    MonitorSettings settings() const { return m_settings; }

    void accept() override;

private:
    MonitorSettings m_settings;
    QLineEdit *m_url;
    QLineEdit *m_interval;
    QLineEdit *m_caFile;
    QCheckBox *m_notifications;
    QLabel *m_error;
};

} // namespace slp::monitor
