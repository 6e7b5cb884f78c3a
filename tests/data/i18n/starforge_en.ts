<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en">
<context>
    <name>TranslationsTest</name>
    <message numerus="yes">
        <source>%n secret(s) moved</source>
        <translation>
            <numerusform>%n secret moved</numerusform>
            <numerusform>%n secrets moved</numerusform>
        </translation>
    </message>
</context>
</TS>
