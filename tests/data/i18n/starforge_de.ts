<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>TranslationsTest</name>
    <message>
        <source>the job has ended</source>
        <translation>der Job ist beendet</translation>
    </message>
</context>
</TS>
