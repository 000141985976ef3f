using System.Text;

namespace WorkflowService.Engine.Search.Query;

/// <summary>Splits a filter or an orderBy into tokens; the first character that fits no token is the error.</summary>
internal static class SearchLexer
{
    /// <summary>Appends the tokens of <paramref name="text"/> to <paramref name="tokens"/>, ending with an End token.</summary>
    public static SearchQueryError? Tokenize(string text, string label, List<SearchToken> tokens)
    {
        var i = 0;
        while (i < text.Length)
        {
            var c = text[i];
            var start = i;
            if (char.IsWhiteSpace(c))
            {
                i++;
            }
            else if (IsNameStart(c))
            {
                while (i < text.Length && IsNamePart(text[i]))
                {
                    i++;
                }

                tokens.Add(new SearchToken(SearchTokenKind.Name, start, text[start..i]));
            }
            else if (char.IsAsciiDigit(c) || ((c is '-' or '+' or '.') && StartsNumber(text, i)))
            {
                i = NumberEnd(text, i);
                tokens.Add(new SearchToken(SearchTokenKind.Number, start, text[start..i]));
            }
            else if (c == '"')
            {
                if (ReadString(text, ref i, label, out var value) is { } error)
                {
                    return error;
                }

                tokens.Add(new SearchToken(SearchTokenKind.String, start, text[start..i], value));
            }
            else if (c is '=' or '<' or '>' || (c == '!' && At(text, i + 1) == '='))
            {
                i += At(text, i + 1) == '=' && c != '=' ? 2 : 1;
                tokens.Add(new SearchToken(SearchTokenKind.Operator, start, text[start..i]));
            }
            else if (c is '(' or ')' or ',')
            {
                i++;
                var kind = c switch { '(' => SearchTokenKind.OpenParen, ')' => SearchTokenKind.CloseParen, _ => SearchTokenKind.Comma };
                tokens.Add(new SearchToken(kind, start, text[start..i]));
            }
            else
            {
                var shown = char.IsControl(c) ? $"U+{(int)c:X4}" : c.ToString();
                return new SearchQueryError($"{label}: '{shown}' at position {start} is not part of the language", start, null);
            }
        }

        tokens.Add(new SearchToken(SearchTokenKind.End, text.Length, ""));
        return null;
    }

    private static bool IsNameStart(char c) => char.IsAsciiLetter(c) || c == '_';

    private static bool IsNamePart(char c) => char.IsAsciiLetterOrDigit(c) || c == '_';

    private static char At(string text, int i) => i < text.Length ? text[i] : '\0';

    // A sign or a point starts a number only when a digit follows (a sign may be followed by ".5").
    private static bool StartsNumber(string text, int i)
    {
        if (text[i] is '-' or '+')
        {
            i++;
        }

        return char.IsAsciiDigit(At(text, i)) || (At(text, i) == '.' && char.IsAsciiDigit(At(text, i + 1)));
    }

    // sign? digits ("." digits?)? | sign? "." digits, then (e|E sign? digits)?; decimal.Parse judges the range later.
    private static int NumberEnd(string text, int i)
    {
        if (text[i] is '-' or '+')
        {
            i++;
        }

        while (char.IsAsciiDigit(At(text, i)))
        {
            i++;
        }

        if (At(text, i) == '.')
        {
            i++;
            while (char.IsAsciiDigit(At(text, i)))
            {
                i++;
            }
        }

        var exponent = i;
        if (At(text, exponent) is 'e' or 'E')
        {
            exponent++;
            if (At(text, exponent) is '-' or '+')
            {
                exponent++;
            }

            if (char.IsAsciiDigit(At(text, exponent)))
            {
                while (char.IsAsciiDigit(At(text, exponent)))
                {
                    exponent++;
                }

                i = exponent;
            }
        }

        return i;
    }

    private static SearchQueryError? ReadString(string text, ref int i, string label, out string value)
    {
        var start = i;
        var content = new StringBuilder();
        value = "";
        i++;
        while (i < text.Length)
        {
            var c = text[i];
            if (c == '"')
            {
                i++;
                value = content.ToString();
                return null;
            }

            if (c == '\\')
            {
                var escaped = At(text, i + 1);
                if (escaped is not ('"' or '\\'))
                {
                    return new SearchQueryError(
                        $"{label}: a backslash in a string escapes \" or \\ only; position {i} has \\{(escaped == '\0' ? "" : escaped)}", i, null);
                }

                content.Append(escaped);
                i += 2;
                continue;
            }

            content.Append(c);
            i++;
        }

        return new SearchQueryError($"{label}: the string at position {start} has no closing \"", start, null);
    }
}
