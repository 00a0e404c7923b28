// The binding's own JSON codec: strict both ways.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using OpenAppleModels;

namespace OpenAppleModels.Tests
{
    public static class JsonTests
    {
        [Test]
        public static void ParsesEveryKindOfValue()
        {
            var value = J.Obj(Json.Parse(" {\"s\":\"a\\\"b\\\\c\\/\\n\\u00e9\\ud83d\\ude00\",\"i\":-42,\"d\":1.5,\"e\":2E+3,\"t\":true,\"f\":false,\"n\":null,"
                + "\"a\":[1,[],{}],\"o\":{\"k\":\"v\"}}\r\n"));
            Check.Equal("a\"b\\c/\n\u00e9\U0001F600", value["s"]);
            Check.True(value["i"] is long && (long)value["i"] == -42, "integers are long");
            Check.True(value["d"] is double && (double)value["d"] == 1.5, "fractions are double");
            Check.True(value["e"] is double && (double)value["e"] == 2000, "exponents are double");
            Check.Equal(true, value["t"]);
            Check.Equal(false, value["f"]);
            Check.True(value.ContainsKey("n") && value["n"] == null, "null");
            Check.Equal(J.A(1L, J.A(), J.O()), value["a"]);
            Check.Equal(J.O("k", "v"), value["o"]);
            Check.Equal(J.A("s", "i", "d", "e", "t", "f", "n", "a", "o"), value.Keys.ToList(), "keys keep their order");
        }

        [Test]
        public static void IntegersStayExactAsLong()
        {
            Check.True((long)Json.Parse("9007199254740993") == 9007199254740993L, "beyond 2^53 exactly");
            Check.True((long)Json.Parse("-9223372036854775808") == long.MinValue, "long.MinValue");
            Check.True(Json.Parse("9223372036854775808") is double, "past long: a double");
            Check.True(Json.Parse("-0") is long, "-0 is an integer");
            Check.Equal("9007199254740993", Json.Serialize(9007199254740993L));
        }

        [Test]
        public static void RefusesWhatIsNotStrictJson()
        {
            var bad = new[]
            {
                "NaN", "Infinity", "-Infinity", "{\"x\":NaN}", "[Infinity]", "1e999", "-1e999", "01", "-", "1.", ".5", "+1", "1e", "0x10",
                "'a'", "{'a':1}", "{a:1}", "[1,]", "{\"a\":1,}", "[1 2]", "{\"a\" 1}", "\"a", "\"\\x\"", "\"\\u12\"", "\"\\u12g4\"",
                "\"tab\there\"", "\"line\nbreak\"", "tru", "nul", "True", "[1]]", "{} {}", "1 2", "", " ", "// c\n1", "/* c */1", "[1]\u00a0",
            };
            foreach (var text in bad)
            {
                var error = Check.Throws<OamJsonException>(() => Json.Parse(text), "parsing " + Check.Show(text));
                Check.Contains("not strict JSON", error.Message);
            }
            Check.Contains("NaN", Check.Throws<OamJsonException>(() => Json.Parse("{\"v\":NaN}"), "NaN").Message);
        }

        [Test]
        public static void NestingIsLimitedToOneHundred()
        {
            Func<int, string> nested = depth => new string('[', depth) + new string(']', depth);
            Check.True(Json.Parse(nested(100)) is List<object>, "100 levels parse");
            Check.Contains("deeper than 100", Check.Throws<OamJsonException>(() => Json.Parse(nested(101)), "101 levels").Message);
            Check.Contains("deeper than 100", Check.Throws<OamJsonException>(() => Json.Parse(string.Concat(Enumerable.Repeat("{\"a\":", 50)) + nested(60) + new string('}', 50)), "mixed").Message);
            object value = J.A();
            for (int i = 1; i < 100; i++) value = J.A(value);
            Check.Equal(nested(100), Json.Serialize(value), "100 levels write");
            var cycle = new List<object>();
            cycle.Add(cycle);
            Check.Contains("deeper than 100", Check.Throws<OamJsonException>(() => Json.Serialize(cycle), "a cycle").Message);
        }

        [Test]
        public static void RefusesToWriteNaNAndInfinities()
        {
            foreach (var value in new object[] { double.NaN, double.PositiveInfinity, double.NegativeInfinity, float.NaN, float.PositiveInfinity })
                Check.Throws<OamJsonException>(() => Json.Serialize(J.O("x", value)), "writing " + value);
            Check.Throws<OamJsonException>(() => Json.Serialize(new object()), "an arbitrary object");
        }

        [Test]
        public static void EscapesControlCharactersLineSeparatorsAndLoneSurrogates()
        {
            Check.Equal("\"a\\u2028b\\u2029c\"", Json.Serialize("a\u2028b\u2029c"));
            Check.Equal("\"\\u0000\\u001f\\b\\f\\n\\r\\t\\\"\\\\\"", Json.Serialize("\u0000\u001f\b\f\n\r\t\"\\"));
            Check.Equal("{\"s\":\"\\ud800\"}", Json.Serialize(J.O("s", "\ud800")));
            Check.Equal("\"x\\udc00y\"", Json.Serialize("x\udc00y"));
            Check.Equal("\"\U0001F600 é\"", Json.Serialize("\U0001F600 é"), "pairs and other text stay as they are");
            Check.Equal("/", Json.Parse(Json.Serialize("/")));
            var all = new StringBuilder();
            for (int c = 0; c < 0x3000; c++) all.Append((char)c);
            var text = all.ToString();
            var written = Json.Serialize(text);
            Check.True(written.All(c => c >= 0x20 && c != '\u2028' && c != '\u2029'), "no raw control or separator character is written");
            Check.True(!written.Any(char.IsSurrogate), "no lone surrogate is written raw");
            Check.Equal(text, Json.Parse(written), "and it reads back");
        }

        [Test]
        public static void WritesNumbersAndKnownTypes()
        {
            Check.Equal("[1,-2,3,4,5,6,7,8]", Json.Serialize(new object[] { 1, -2L, (short)3, (byte)4, (sbyte)5, (ushort)6, 7u, 8ul }));
            Check.Equal("[1.5,2.0,0.1,1E+300,-0.25]", Json.Serialize(new object[] { 1.5, 2.0, 0.1f, 1e300, -0.25 }));
            Check.Equal("[1.50,3]", Json.Serialize(new object[] { 1.50m, 3m }));
            Check.Equal("{\"1\":\"Red\",\"c\":\"x\",\"g\":\"00000000-0000-0000-0000-000000000000\"}",
                Json.Serialize(new Dictionary<object, object> { { 1, ConsoleColor.Red }, { "c", 'x' }, { "g", Guid.Empty } }));
            Check.Equal("{\"a\":1,\"b\":[true,null]}", Json.Serialize(new { a = 1, b = new object[] { true, null } }));
            Check.Equal("\"2026-12-02T10:00:00.0000000Z\"", Json.Serialize(new DateTime(2026, 12, 2, 10, 0, 0, DateTimeKind.Utc)));
            foreach (var text in new[] { "0.1", "1.7976931348623157E+308", "5E-324", "123456789.123" })
                Check.Equal(double.Parse(text, System.Globalization.CultureInfo.InvariantCulture), Json.Parse(Json.Serialize(Json.Parse(text))), "round trip " + text);
        }
    }
}
