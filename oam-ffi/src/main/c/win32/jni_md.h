/*
 * The machine-dependent part of jni.h for 64-bit Windows, for cross-building OpenAppleModelsFFI.dll with
 * mingw-w64 on Linux (a Linux JDK only carries include/linux/jni_md.h, whose jlong is a 64-bit long: on
 * Windows long has 32 bits). The same types as a Windows JDK's include/win32/jni_md.h (jni.h of JDK 25 defines
 * JNICALL itself).
 */
#ifndef _JAVASOFT_JNI_MD_H_
#define _JAVASOFT_JNI_MD_H_

#define JNIEXPORT __declspec(dllexport)
#define JNIIMPORT __declspec(dllimport)

typedef int jint;
typedef long long jlong;
typedef signed char jbyte;

#endif
