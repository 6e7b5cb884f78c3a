<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>MainWindow</name>
    <message>
        <source>Starforge</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Main toolbar</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connection &amp;Profiles…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Shift+P</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Q</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;About Starforge</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ProfilesDialog</name>
    <message>
        <source>Connection Profiles</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Profiles&lt;/b&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Add…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Create an empty profile</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Import kubeconfig…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Create or update a profile from a kubeconfig context</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>D&amp;uplicate…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re&amp;name…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Make a&amp;ctive</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connect the main window with this profile</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Delete…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Reset to default</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Back to the default; for a secret: remove it from the keychain (on apply)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re&amp;vert</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A&amp;pply</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::MainWindow</name>
    <message>
        <source>Set up a connection…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The connection profile the window works with</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Profile: </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TLS verification is off</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>FORGE_K8S_INSECURE_SKIP_TLS_VERIFY is on: anyone on the network path can read and change what the app sends, including the token. Use it only with throw-away clusters.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Jobs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No jobs: the app does not connect to a cluster yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU Capacity</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No capacity figures: not connected.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Playground</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No playground models: not connected.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Events</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No events: select a job once connected.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Logs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No logs: select a job once connected.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(no profiles)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(none active)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not connected: no connection profile yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not connected: no profile is active</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not connected: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not connected: the profile has no API server (FORGE_K8S_API_SERVER)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not connected to %1: this version has no Kubernetes client yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Profile: none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Profile: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Starforge</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 — Starforge</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;h2&gt;Welcome to Starforge&lt;/h2&gt;&lt;p&gt;Run NeMo-RL training on Kubernetes and KubeRay from here.&lt;/p&gt;&lt;p&gt;Start with a connection profile: import a context from your kubeconfig, or enter the API server and a token.&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;h2&gt;%1&lt;/h2&gt;&lt;p&gt;%2&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No active profile</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connection profiles…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>About Starforge</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Starforge Desktop %1

Run NeMo-RL training on Kubernetes and KubeRay from the desktop.
Qt %2.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::ProfilesDialog</name>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;%2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> — active</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unapplied changes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The changes to profile %1 have not been applied. Discard them?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The keychain could not be read: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No profiles yet. Add one, or import a context from a kubeconfig file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select a profile to see and edit its settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select a setting to see what it means. Environment variables of the same name override the profile while they are set.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waiting for the keychain…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A profile named %1 already exists; choose another name.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add profile</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name of the new profile (letters, digits, &apos;.&apos;, &apos;_&apos;, &apos;-&apos;):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Created profile %1. Set its API server and token to connect.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Duplicate profile</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name of the copy of %1:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Duplicated %1 as %2, secrets included.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rename profile</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New name of %1:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Renamed %1 to %2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete profile</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete profile %1 and its secrets in the keychain? This cannot be undone.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keychain unavailable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1

Delete the profile anyway and leave its secrets in the keychain?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deleted profile %1, but %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deleted profile %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import kubeconfig</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 defines no contexts; there is nothing to import.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context to import from %1:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Profile to create or update from context %1:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Profile %1 exists. Replace its API server, CA, TLS and token settings with those of context %2?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Imported context %1 into profile %2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Note: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt; — active</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is the active profile.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Saved %n change(s) to profile %1.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::SettingDelegate</name>
    <message>
        <source>%1 (default)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>paste the new value; it goes to the keychain</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>default: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Starforge::Models::ProfileListModel</name>
    <message>
        <source>%1 (active)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: no API server set</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Starforge::Models::ProfileSettingsModel</name>
    <message>
        <source>Setting</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Value</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Source</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The environment variable %1 is set and overrides the profile while it is.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(cleared on apply)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>•••••••• (saved to the keychain on apply)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>set in the environment</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(keychain unavailable)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(checking keychain…)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>set in the keychain</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not set</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(unset on apply)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (default, on apply)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(not set)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>edited</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>environment (profile: %1)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
