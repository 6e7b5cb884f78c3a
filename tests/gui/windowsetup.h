#pragma once

// What a main window or a profiles dialog under test stands on: a profiles file, an in-memory
// keychain, the ProfileManager over both, and scripted answers to the questions it asks. Tests
// take the parts by name: `Testing::WindowSetup setup(file); auto &[store, secrets, manager,
// prompts] = setup;`.

#include "core/config/profilemanager.h"
#include "scriptedprompts.h"
#include "support/memorysecretstore.h"

namespace Starforge::Testing {

struct WindowSetup
{
    explicit WindowSetup(const QString &profilesFile)
        : store(profilesFile)
        , manager(&store, &secrets)
    {
    }

    Config::ProfileStore store;
    MemorySecretStore secrets;
    Config::ProfileManager manager;
    ScriptedPrompts prompts;
};

} // namespace Starforge::Testing
