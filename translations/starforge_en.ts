<?xml version='1.0' encoding='utf-8'?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>Capacity</name>
    <message numerus="yes">
        <source>%n node(s)</source>
        <translation>
            <numerusform>%n node</numerusform><numerusform>%n nodes</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>%1 %2: %3; %n has %4 free now</source>
        <translation>
            <numerusform>%1 %2: %3; %n has %4 free now</numerusform><numerusform>%1 %2: %3; %n have %4 free now</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>, %n more is busy</source>
        <translation>
            <numerusform>, %n more is busy</numerusform><numerusform>, %n more are busy</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>, %n more is cordoned, not ready or tainted</source>
        <translation>
            <numerusform>, %n more is cordoned, not ready or tainted</numerusform><numerusform>, %n more are cordoned, not ready or tainted</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>%n schedulable node(s)</source>
        <translation>
            <numerusform>%n schedulable node</numerusform><numerusform>%n schedulable nodes</numerusform></translation>
    </message>
</context>
<context>
    <name>CliOutput</name>
    <message numerus="yes">
        <source>%1 byte(s)</source>
        <comment>a size; the count decides the plural form</comment>
        <translation>
            <numerusform>%1 byte</numerusform><numerusform>%1 bytes</numerusform></translation>
    </message>
</context>
<context>
    <name>Diagnosis</name>
    <message numerus="yes">
        <source>%n attempt(s)</source>
        <translation>
            <numerusform>%n attempt</numerusform><numerusform>%n attempts</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>%n restart(s)</source>
        <translation>
            <numerusform>%n restart</numerusform><numerusform>%n restarts</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>%n time(s)</source>
        <translation>
            <numerusform>%n time</numerusform><numerusform>%n times</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>%n GPU(s)</source>
        <translation>
            <numerusform>%n GPU</numerusform><numerusform>%n GPUs</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>%n schedulable node(s)</source>
        <translation>
            <numerusform>%n schedulable node</numerusform><numerusform>%n schedulable nodes</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>%n node has</source>
        <translation>
            <numerusform>%n node has</numerusform><numerusform>%n nodes have</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>%n node(s)</source>
        <translation>
            <numerusform>%n node</numerusform><numerusform>%n nodes</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>%n pod(s)</source>
        <translation>
            <numerusform>%n pod</numerusform><numerusform>%n pods</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>%n failed pod(s)</source>
        <translation>
            <numerusform>%n failed pod</numerusform><numerusform>%n failed pods</numerusform></translation>
    </message>
</context>
<context>
    <name>JobSpec</name>
    <message numerus="yes">
        <source>The JobSpec has %n problem(s):</source>
        <translation>
            <numerusform>The JobSpec has %n problem:</numerusform><numerusform>The JobSpec has %n problems:</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::CapacityCommand</name>
    <message numerus="yes">
        <source> (%n node(s))</source>
        <translation>
            <numerusform> (%n node)</numerusform><numerusform> (%n nodes)</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::ChatCommand</name>
    <message numerus="yes">
        <source>%n token(s), first after %1 ms, %2 tokens/s</source>
        <translation>
            <numerusform>%n token, first after %1 ms, %2 tokens/s</numerusform><numerusform>%n tokens, first after %1 ms, %2 tokens/s</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>%n token(s), first after %1 ms, %2 tokens/s (%3)</source>
        <translation>
            <numerusform>%n token, first after %1 ms, %2 tokens/s (%3)</numerusform><numerusform>%n tokens, first after %1 ms, %2 tokens/s (%3)</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::DeleteCommand</name>
    <message numerus="yes">
        <source>deleted job %1: its RayJob and its archive (%n object(s))</source>
        <translation>
            <numerusform>deleted job %1: its RayJob and its archive (%n object)</numerusform><numerusform>deleted job %1: its RayJob and its archive (%n objects)</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>deleted job %1: its archive (%n object(s))</source>
        <translation>
            <numerusform>deleted job %1: its archive (%n object)</numerusform><numerusform>deleted job %1: its archive (%n objects)</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::JobsCommand</name>
    <message numerus="yes">
        <source>archived %1 %2 %3 (%n not archived)</source>
        <translation>
            <numerusform>archived %1 %2 %3 (%n not archived)</numerusform><numerusform>archived %1 %2 %3 (%n not archived)</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::ProfileCommand</name>
    <message numerus="yes">
        <source>starforge-cli: note: moved %n secret(s) from the settings file into the keychain</source>
        <translation>
            <numerusform>starforge-cli: note: moved %n secret from the settings file into the keychain</numerusform><numerusform>starforge-cli: note: moved %n secrets from the settings file into the keychain</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::StatusCommand</name>
    <message numerus="yes">
        <source>%n log(s)</source>
        <translation>
            <numerusform>%n log</numerusform><numerusform>%n logs</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::CompareWindow</name>
    <message numerus="yes">
        <source>Compare %n run(s)</source>
        <translation>
            <numerusform>Compare %n run</numerusform><numerusform>Compare %n runs</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>Reading %n archived driver log(s)…</source>
        <translation>
            <numerusform>Reading %n archived driver log…</numerusform><numerusform>Reading %n archived driver logs…</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::EventsPanel</name>
    <message numerus="yes">
        <source>%1 — %2, %n event(s)</source>
        <translation>
            <numerusform>%1 — %2, %n event</numerusform><numerusform>%1 — %2, %n events</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>Show the evidence (%n event(s))</source>
        <translation>
            <numerusform>Show the evidence (%n event)</numerusform><numerusform>Show the evidence (%n events)</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::JobsPanel</name>
    <message numerus="yes">
        <source>Job %1 deleted: %n archived object(s) removed.</source>
        <translation>
            <numerusform>Job %1 deleted: %n archived object removed.</numerusform><numerusform>Job %1 deleted: %n archived objects removed.</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::JobsTray</name>
    <message numerus="yes">
        <source>Starforge: %n active job(s)</source>
        <translation>
            <numerusform>Starforge: %n active job</numerusform><numerusform>Starforge: %n active jobs</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::LogsPanel</name>
    <message numerus="yes">
        <source>Copied the first %n line(s) of the selection; Save… writes the whole log.</source>
        <translation>
            <numerusform>Copied the first %n line of the selection; Save… writes the whole log.</numerusform><numerusform>Copied the first %n lines of the selection; Save… writes the whole log.</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>Copied %n line(s).</source>
        <translation>
            <numerusform>Copied %n line.</numerusform><numerusform>Copied %n lines.</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>%n line(s)</source>
        <translation>
            <numerusform>%n line</numerusform><numerusform>%n lines</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>%n matching line(s)</source>
        <translation>
            <numerusform>%n matching line</numerusform><numerusform>%n matching lines</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::MatchScrollBar</name>
    <message numerus="yes">
        <source>Scrolls the log. %n search match(es) are marked along it; F3 and Shift+F3 go to them.</source>
        <translation>
            <numerusform>Scrolls the log. %n search match is marked along it; F3 and Shift+F3 go to them.</numerusform><numerusform>Scrolls the log. %n search matches are marked along it; F3 and Shift+F3 go to them.</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::ProfilesDialog</name>
    <message numerus="yes">
        <source>Saved %n change(s) to profile %1.</source>
        <translation>
            <numerusform>Saved %n change to profile %1.</numerusform><numerusform>Saved %n changes to profile %1.</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::ProgressPlot</name>
    <message numerus="yes">
        <source>%1 over %n step(s): %2 at step %3, %4 at step %5.</source>
        <translation>
            <numerusform>%1 over %n step: %2 at step %3, %4 at step %5.</numerusform><numerusform>%1 over %n steps: %2 at step %3, %4 at step %5.</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>%n step(s) reported nan.</source>
        <translation>
            <numerusform>%n step reported nan.</numerusform><numerusform>%n steps reported nan.</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Models::JobsModel</name>
    <message numerus="yes">
        <source>%1: %n GPU(s) in all (nodes × GPUs per node, series)</source>
        <translation>
            <numerusform>%1: %n GPU in all (nodes × GPUs per node, series)</numerusform><numerusform>%1: %n GPUs in all (nodes × GPUs per node, series)</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Models::LogLinesModel</name>
    <message numerus="yes">
        <source>start: %n file(s) in the Capsule</source>
        <translation>
            <numerusform>start: %n file in the Capsule</numerusform><numerusform>start: %n files in the Capsule</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Models::TimelineModel</name>
    <message numerus="yes">
        <source>, seen %n times from %1 to %2</source>
        <translation>
            <numerusform>, seen %n time from %1 to %2</numerusform><numerusform>, seen %n times from %1 to %2</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Models::TranscriptModel</name>
    <message numerus="yes">
        <source> · %n token(s)</source>
        <translation>
            <numerusform> · %n token</numerusform><numerusform> · %n tokens</numerusform></translation>
    </message>
</context>
<context>
    <name>SubmitCommand</name>
    <message numerus="yes">
        <source>%n day(s)</source>
        <translation>
            <numerusform>%n day</numerusform><numerusform>%n days</numerusform></translation>
    </message>
</context>
</TS>
