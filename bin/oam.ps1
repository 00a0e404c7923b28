# The oam launcher for PowerShell (Windows PowerShell 5.1 and PowerShell 7 on any OS): `oam.ps1 chat`,
# `oam.ps1 respond "Hello"`. It finds the same jar and Java 21+ as oam.cmd:
#   the jar: lib/oam.jar of a release archive, else this source tree's build (oam-ffi/target/native/oam.jar or
#            oam-cli/target/oam.jar; build it with "mvn -pl oam-ffi -am package");
#   the Java: OAM_JAVA_HOME, the release's own runtime/, JAVA_HOME, then java on the PATH.
# For a game that spawns the bridge and speaks the protocol over its pipes, start oam.cmd (or java itself):
# Windows PowerShell re-encodes the piped output of the programs it runs.
$ErrorActionPreference = 'Stop'
$root = Split-Path -Parent $PSScriptRoot
$exe = if ($IsWindows -or $env:OS -eq 'Windows_NT') { 'java.exe' } else { 'java' }

$jar = @('lib/oam.jar', 'oam-ffi/target/native/oam.jar', 'oam-cli/target/oam.jar') |
    ForEach-Object { Join-Path $root $_ } | Where-Object { Test-Path -LiteralPath $_ -PathType Leaf } |
    Select-Object -First 1
if (-not $jar) {
    [Console]::Error.WriteLine("oam: no oam.jar was found under ${root}: unpack a release archive, or build with `"mvn -pl oam-ffi -am package`".")
    exit 1
}

function Get-JavaMajor([string] $home_) {
    $release = Join-Path $home_ 'release'
    if (-not (Test-Path -LiteralPath $release)) { return 0 }
    $line = Select-String -LiteralPath $release -Pattern '^JAVA_VERSION="(\d+)(\.(\d+))?' | Select-Object -First 1
    if (-not $line) { return 0 }
    $major = [int]$line.Matches[0].Groups[1].Value
    if ($major -eq 1 -and $line.Matches[0].Groups[3].Success) { $major = [int]$line.Matches[0].Groups[3].Value }
    return $major
}

$candidates = @()
if ($env:OAM_JAVA_HOME) { $candidates += , @($env:OAM_JAVA_HOME, 'OAM_JAVA_HOME') }
$candidates += , @((Join-Path $root 'runtime'), 'runtime')
if ($env:JAVA_HOME) { $candidates += , @($env:JAVA_HOME, 'JAVA_HOME') }
$onPath = Get-Command $exe -CommandType Application -ErrorAction SilentlyContinue | Select-Object -First 1
if ($onPath) { $candidates += , @((Split-Path -Parent (Split-Path -Parent $onPath.Source)), 'PATH') }

$java = $null
foreach ($candidate in $candidates) {
    $binary = Join-Path (Join-Path $candidate[0] 'bin') $exe
    if (-not (Test-Path -LiteralPath $binary -PathType Leaf)) { continue }
    if ((Get-JavaMajor $candidate[0]) -ge 21) { $java = $binary; break }
    [Console]::Error.WriteLine("oam: $($candidate[1]) names $($candidate[0]), which is not a Java 21 or newer; looking further.")
}
if (-not $java) {
    [Console]::Error.WriteLine("oam: no Java 21 or newer was found; looked at OAM_JAVA_HOME, $(Join-Path $root 'runtime'), JAVA_HOME and java on the PATH.")
    [Console]::Error.WriteLine("  Install one, for example Eclipse Temurin 21, or set OAM_JAVA_HOME to one.")
    exit 1
}

if (-not $env:GGML_NO_BACKTRACE) { $env:GGML_NO_BACKTRACE = '1' }
$base = if ($env:LOCALAPPDATA) { $env:LOCALAPPDATA } elseif ($env:XDG_CACHE_HOME) { $env:XDG_CACHE_HOME } else { [IO.Path]::GetTempPath() }
$crashDir = Join-Path $base 'oam'
New-Item -ItemType Directory -Force -Path $crashDir -ErrorAction SilentlyContinue | Out-Null
$javaOptions = if ($env:OAM_JAVA_OPTS) { -split $env:OAM_JAVA_OPTS } else { @() }
& $java --enable-native-access=ALL-UNNAMED "-XX:ErrorFile=$(Join-Path $crashDir 'hs_err_pid%p.log')" @javaOptions -jar $jar @args
exit $LASTEXITCODE
