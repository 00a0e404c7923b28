@echo off
rem The oam launcher for Windows (cmd.exe; games spawn it as "oam.cmd stdio"). It runs oam.jar on a Java 21+:
rem   the jar: lib\oam.jar of a release archive, else this source tree's build (oam-ffi\target\native\oam.jar or
rem            oam-cli\target\oam.jar; build it with "mvn -pl oam-ffi -am package");
rem   the Java: OAM_JAVA_HOME, the release's own runtime\, JAVA_HOME, then java.exe on the PATH.
rem Java's stdout is the process's own (it is not piped through anything), so "oam stdio" keeps stdout for
rem protocol messages only; messages of this script go to stderr.
setlocal EnableExtensions DisableDelayedExpansion
set "OAM_ROOT=%~dp0.."
set "OAM_JAR=%OAM_ROOT%\lib\oam.jar"
if not exist "%OAM_JAR%" set "OAM_JAR=%OAM_ROOT%\oam-ffi\target\native\oam.jar"
if not exist "%OAM_JAR%" set "OAM_JAR=%OAM_ROOT%\oam-cli\target\oam.jar"
if not exist "%OAM_JAR%" goto :no_jar

set "OAM_HOME="
if defined OAM_JAVA_HOME call :consider "%OAM_JAVA_HOME%" OAM_JAVA_HOME
if not defined OAM_HOME if exist "%OAM_ROOT%\runtime\bin\java.exe" call :consider "%OAM_ROOT%\runtime" runtime
if not defined OAM_HOME if defined JAVA_HOME call :consider "%JAVA_HOME%" JAVA_HOME
if not defined OAM_HOME for %%J in (java.exe) do if not "%%~$PATH:J"=="" call :consider "%%~dp$PATH:J.." PATH
if not defined OAM_HOME goto :no_java

if not defined GGML_NO_BACKTRACE set "GGML_NO_BACKTRACE=1"
set "OAM_CRASH_DIR=%LOCALAPPDATA%\oam"
if not defined LOCALAPPDATA set "OAM_CRASH_DIR=%TEMP%"
if not exist "%OAM_CRASH_DIR%" mkdir "%OAM_CRASH_DIR%" 2>nul
"%OAM_HOME%\bin\java.exe" --enable-native-access=ALL-UNNAMED "-XX:ErrorFile=%OAM_CRASH_DIR%\hs_err_pid%%p.log" %OAM_JAVA_OPTS% -jar "%OAM_JAR%" %*
exit /b %ERRORLEVEL%

:no_jar
echo oam: no oam.jar was found under "%OAM_ROOT%": unpack a release archive, or build with "mvn -pl oam-ffi -am package". 1>&2
exit /b 1

:no_java
echo oam: no Java 21 or newer was found; looked at OAM_JAVA_HOME, "%OAM_ROOT%\runtime", JAVA_HOME and java.exe on the PATH. 1>&2
echo   Install one, for example Eclipse Temurin 21, or set OAM_JAVA_HOME to one. 1>&2
exit /b 1

rem :consider HOME WHERE  sets OAM_HOME when HOME is a Java 21 or newer (read from HOME\release)
:consider
if not exist "%~1\bin\java.exe" exit /b 0
set "OAM_MAJOR=0"
if exist "%~1\release" for /f "usebackq tokens=1,2 delims==" %%K in ("%~1\release") do if "%%K"=="JAVA_VERSION" call :major %%L
if %OAM_MAJOR% LSS 21 goto :too_old
set "OAM_HOME=%~f1"
exit /b 0
:too_old
echo oam: %2 names "%~1", which is not a Java 21 or newer; looking further. 1>&2
exit /b 0

rem :major "21.0.5"  sets OAM_MAJOR to the feature version (1.8.0 counts as 1: older than 21 either way)
:major
for /f "tokens=1 delims=." %%M in ("%~1") do set "OAM_MAJOR=%%M"
exit /b 0
